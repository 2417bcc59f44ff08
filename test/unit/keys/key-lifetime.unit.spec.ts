import { expect } from 'chai';
import { newEvent } from '../../../events/envelope.ts';
import { assessKey } from '../../../services/keys/assess.ts';
import type { KeyEvent, KeyGeneratedData } from '../../../services/keys/events.ts';
import { keysProjection, recordForKey, type KeyRecord } from '../../../services/keys/keys.projection.ts';
import { rotateOptions } from '../../../services/keys/key-lifetime.ts';
import { noUsage } from '../../../services/keys/usage.ts';

const T0 = new Date('2026-11-25T12:00:00Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const hash = (c: string) => c.repeat(64);

const generated = (key: string, generation: number, seconds: number, extra: Partial<KeyGeneratedData> = {}) =>
  newEvent(
    'key.generated',
    {
      keyHash: hash(key),
      last4: key.repeat(4),
      tier: 'pro',
      customerId: 'cus-1',
      subscriptionId: 'sub-1',
      email: 'ada@example.com',
      encryptedKey: 'x',
      source: generation === 0 ? 'api' : 'rotation',
      generation,
      replacesLast4: null,
      ...extra,
    } satisfies KeyGeneratedData,
    { occurredAt: at(seconds) },
  );
const revoked = (key: string, seconds: number) =>
  newEvent('key.revoked', { keyHash: hash(key), subscriptionId: 'sub-1', reason: 'test' }, { occurredAt: at(seconds) });

const fold = (events: KeyEvent[]): KeyRecord =>
  events.reduce<KeyRecord | null>((doc, e) => keysProjection.evolve(doc as never, e) as KeyRecord, null)!;
const verdict = (record: KeyRecord | null, seconds: number) => {
  if (!record) return 'NOT_FOUND';
  const r = assessKey(record, noUsage(), { metric: 'queries', amount: 1 }, at(seconds).getTime());
  return r.valid ? 'valid' : r.code;
};

describe('key lifetimes: expiry and rotation grace periods (unit)', () => {
  it('a key with an expiry is valid before it and EXPIRED from that instant on', () => {
    const record = fold([generated('a', 0, 0, { expiresAt: at(60) })]);
    expect(verdict(record, 59.999)).to.equal('valid');
    expect(verdict(record, 60)).to.equal('EXPIRED');
    expect(verdict(fold([generated('a', 0, 0)]), 10 ** 9)).to.equal('valid');
  });

  it('a rotation with a grace period keeps the replaced key working until it ends, and the new key from the start', () => {
    const record = fold([generated('a', 0, 0), generated('b', 1, 10, { previousValidUntil: at(310) })]);
    expect(record.previous).to.deep.include({ keyHash: hash('a'), validUntil: at(310) });
    expect(verdict(recordForKey(record, hash('b')), 11)).to.equal('valid');
    expect(verdict(recordForKey(record, hash('a')), 309)).to.equal('valid');
    expect(verdict(recordForKey(record, hash('a')), 310)).to.equal('EXPIRED');
    expect(recordForKey(record, hash('c'))).to.equal(null);
  });

  it('the replaced key keeps its own expiry when that comes first', () => {
    const record = fold([generated('a', 0, 0, { expiresAt: at(100) }), generated('b', 1, 10, { previousValidUntil: at(310) })]);
    expect(verdict(recordForKey(record, hash('a')), 99)).to.equal('valid');
    expect(verdict(recordForKey(record, hash('a')), 100)).to.equal('EXPIRED');
  });

  it('no grace, a grace already over, a revoked key or a second rotation: the replaced key does not work', () => {
    expect(recordForKey(fold([generated('a', 0, 0), generated('b', 1, 10)]), hash('a'))).to.equal(null);
    expect(recordForKey(fold([generated('a', 0, 0), generated('b', 1, 10, { previousValidUntil: at(5) })]), hash('a'))).to.equal(null);
    const afterRevoke = fold([generated('a', 0, 0), revoked('a', 5), generated('b', 1, 10, { previousValidUntil: at(310) })]);
    expect(recordForKey(afterRevoke, hash('a'))).to.equal(null);
    const twice = fold([
      generated('a', 0, 0),
      generated('b', 1, 10, { previousValidUntil: at(310) }),
      generated('c', 2, 20, { previousValidUntil: at(320) }),
    ]);
    expect(recordForKey(twice, hash('a'))).to.equal(null);
    expect(verdict(recordForKey(twice, hash('b')), 21)).to.equal('valid');
  });

  it("revoking the subscription's key ends the grace of the key it replaced; revoking the replaced one alone ends only its own", () => {
    const rotated = [generated('a', 0, 0), generated('b', 1, 10, { previousValidUntil: at(310) })];
    const bothGone = fold([...rotated, revoked('b', 20)]);
    expect(verdict(recordForKey(bothGone, hash('b')), 21)).to.equal('DISABLED');
    expect(recordForKey(bothGone, hash('a'))).to.equal(null);
    const oldGone = fold([...rotated, revoked('a', 20)]);
    expect(recordForKey(oldGone, hash('a'))).to.equal(null);
    expect(verdict(recordForKey(oldGone, hash('b')), 21)).to.equal('valid');
  });

  it("reads a rotation's options: a grace of 0 to 86400 whole seconds, an expiry that is a future instant", () => {
    expect(rotateOptions.safeParse({}).success).to.equal(true);
    expect(rotateOptions.safeParse({ graceSeconds: 0 }).success).to.equal(true);
    for (const graceSeconds of [-1, 1.5, 86_401, '60'])
      expect(rotateOptions.safeParse({ graceSeconds }).success, String(graceSeconds)).to.equal(false);
    expect(rotateOptions.safeParse({ expiresAt: new Date(Date.now() + 60_000).toISOString() }).success).to.equal(true);
    for (const expiresAt of ['2020-01-01T00:00:00Z', 'soon', 5])
      expect(rotateOptions.safeParse({ expiresAt }).success, String(expiresAt)).to.equal(false);
  });
});
