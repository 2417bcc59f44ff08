import { expect } from 'chai';
import type { Document } from 'mongodb';
import type { StoredDocument } from '../../../events/projection.ts';
import { KeyNotReady, keyApplied, readyBackoff, waitForKey } from '../../../services/mailer/key-ready.ts';

const event = (keyHash: string, offset: string) => ({
  data: { keyHash, subscriptionId: 'sub-1' } as never,
  position: { topic: 'keys.events', partition: 2, offset },
});

const stored = (
  fields: Record<string, unknown>,
  pos: { topic: string; partition: number; offset: string }[] = [],
): StoredDocument<Document> =>
  ({ _id: 'sub-1', _v: 1, _pos: pos.map((p) => ({ ...p, recent: [] })), ...fields }) as StoredDocument<Document>;

describe('mailer: a key is mailed only once the keys projection holds it (unit)', () => {
  it('is not ready without a document, or with a document that has neither the key nor the position', () => {
    expect(keyApplied(null, event('h1', '5'))).to.equal(false);
    expect(
      keyApplied(stored({ keyHash: null }, [{ topic: 'subscriptions.events', partition: 2, offset: '9' }]), event('h1', '5')),
    ).to.equal(false);
    expect(keyApplied(stored({ keyHash: null }, [{ topic: 'keys.events', partition: 2, offset: '4' }]), event('h1', '5'))).to.equal(false);
    expect(keyApplied(stored({ keyHash: null }, [{ topic: 'keys.events', partition: 1, offset: '9' }]), event('h1', '5'))).to.equal(false);
  });

  it('is ready when the document names this key', () => {
    expect(keyApplied(stored({ keyHash: 'h1' }), event('h1', '5'))).to.equal(true);
  });

  it("is ready when the event's position is applied, even if a later key replaced this one", () => {
    expect(keyApplied(stored({ keyHash: 'h2' }, [{ topic: 'keys.events', partition: 2, offset: '5' }]), event('h1', '5'))).to.equal(true);
    expect(keyApplied(stored({ keyHash: 'h2' }, [{ topic: 'keys.events', partition: 2, offset: '12' }]), event('h1', '5'))).to.equal(true);
  });

  it('compares offsets as numbers, not strings', () => {
    expect(keyApplied(stored({ keyHash: null }, [{ topic: 'keys.events', partition: 2, offset: '10' }]), event('h1', '9'))).to.equal(true);
    expect(keyApplied(stored({ keyHash: null }, [{ topic: 'keys.events', partition: 2, offset: '9' }]), event('h1', '10'))).to.equal(false);
  });

  it('does not take a tombstone naming the key for the key', () => {
    expect(keyApplied(stored({ keyHash: 'h1', _deleted: true }), event('h1', '5'))).to.equal(false);
  });

  it('looks again at once at first, then often, then backs off to a bound', () => {
    const waits = Array.from({ length: 30 }, (_, i) => readyBackoff(i));
    expect(waits.slice(0, 5), 'the next look as soon as the last one answered (issue 37)').to.deep.equal(Array(5).fill(0));
    expect(waits.slice(5, 20)).to.deep.equal(Array(15).fill(2));
    expect(waits[20]).to.equal(4);
    expect(waits.slice(20)).to.satisfy((w: number[]) => w.every((x, i) => i === 0 || x >= w[i - 1]!));
    expect(Math.max(...waits)).to.equal(100);
  });

  it('waits until a load shows the key, then resolves', async () => {
    const docs = [null, stored({ keyHash: null }), stored({ keyHash: 'h1' })];
    let loads = 0;
    const slept: number[] = [];
    await waitForKey(async () => docs[Math.min(loads++, docs.length - 1)]!, event('h1', '5'), { sleep: async (ms) => void slept.push(ms) });
    expect(loads).to.equal(3);
    expect(slept, 'no sleep between the first looks').to.deep.equal([]);
  });

  it('sleeps between looks only once the first ones missed', async () => {
    let loads = 0;
    const slept: number[] = [];
    await waitForKey(async () => (++loads >= 8 ? stored({ keyHash: 'h1' }) : null), event('h1', '5'), {
      sleep: async (ms) => void slept.push(ms),
    });
    expect(loads).to.equal(8);
    expect(slept).to.deep.equal([2, 2]);
  });

  it('gives up with a transient error once the wait is over', async () => {
    const error = await waitForKey(async () => null, event('h1', '5'), { maxWaitMs: 0, sleep: async () => undefined }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(KeyNotReady);
  });
});
