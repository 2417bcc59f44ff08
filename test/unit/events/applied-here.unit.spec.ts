import { expect } from 'chai';
import { AppliedHere } from '../../../events/applied-here.ts';
import { newEvent, type DeliveredEvent } from '../../../events/envelope.ts';

/** What a projection writer of this process remembers applying, and what it is applying (pure, a clock of its own). */
describe('AppliedHere', () => {
  const ns = 'db.keys';
  let now = 1_000_000;
  const clock = () => now;
  const at = (offset: number, partition = 0): DeliveredEvent =>
    ({
      ...newEvent('usage.incremented', { keyHash: 'a'.repeat(64), metric: 'queries', amount: 1, period: '2026-12' }),
      position: { topic: 'usage.events', partition, offset: String(offset) },
    }) as DeliveredEvent;

  beforeEach(() => {
    now = 1_000_000;
  });

  it('knows the very events applied to a document, and nothing else', () => {
    const here = new AppliedHere({ now: clock });
    const e = at(5);
    here.note(ns, 'sub-1', [e]);
    expect(here.has(ns, 'sub-1', e)).to.equal(true);
    expect(here.has(ns, 'sub-2', e), 'another document').to.equal(false);
    expect(here.has('db.keys_rebuilt', 'sub-1', e), 'another collection').to.equal(false);
    expect(here.has(ns, 'sub-1', at(6)), 'another event').to.equal(false);
    // The same event id at another position (a topic made again, offsets from 0) is another record.
    expect(here.has(ns, 'sub-1', { ...e, position: { ...e.position, offset: '4' } })).to.equal(false);
    expect(here.has(ns, 'sub-1', { ...e, position: { ...e.position, partition: 1 } })).to.equal(false);
  });

  it('keeps the last events of a document across chunks, and forgets them after its time', () => {
    const here = new AppliedHere({ now: clock, ttlMs: 1000 });
    const events = Array.from({ length: 10 }, (_, i) => at(i));
    here.note(ns, 'sub-1', events.slice(0, 6));
    here.note(ns, 'sub-1', events.slice(6));
    expect(events.map((e) => here.has(ns, 'sub-1', e))).to.deep.equal([false, false, true, true, true, true, true, true, true, true]);
    now += 999;
    expect(here.has(ns, 'sub-1', events[9]!)).to.equal(true);
    now += 1;
    expect(here.has(ns, 'sub-1', events[9]!), 'past its time').to.equal(false);
    expect(here.size).to.equal(0);
  });

  it('holds at most its bound of documents, forgetting the least recently noted first', () => {
    const here = new AppliedHere({ now: clock, maxDocuments: 3 });
    const e = at(1);
    const later = at(2);
    for (const id of ['a', 'b', 'c']) here.note(ns, id, [e]);
    here.note(ns, 'a', [later]);
    here.note(ns, 'd', [e]);
    expect(here.size).to.equal(3);
    expect(here.has(ns, 'b', e), 'the oldest').to.equal(false);
    expect(['a', 'c', 'd'].map((id) => here.has(ns, id, e))).to.deep.equal([true, true, true]);
    expect(here.has(ns, 'a', later)).to.equal(true);
  });

  it('forgets everything when a collection is swapped under its name', () => {
    const here = new AppliedHere({ now: clock });
    here.note(ns, 'sub-1', [at(1)]);
    here.forget();
    expect(here.has(ns, 'sub-1', at(1))).to.equal(false);
  });

  it('lets a consumer wait for the events this process is applying to its projection, and only for those', async () => {
    const here = new AppliedHere({ now: clock });
    const mine = at(1);
    const other = at(2);
    expect(here.settled('keys', [mine]), 'nothing in flight costs no promise').to.equal(undefined);
    const done = here.applying('keys', [mine]);
    expect(here.settled('keys', [other]), 'another event').to.equal(undefined);
    expect(here.settled('audit_log', [mine]), "another projection's consumer").to.equal(undefined);
    let settled = false;
    const waiting = here.settled('keys', [other, mine])!.then(() => (settled = true));
    await Promise.resolve();
    await Promise.resolve();
    expect(settled, 'before the write is done').to.equal(false);
    done();
    await waiting;
    expect(settled).to.equal(true);
    expect(here.settled('keys', [mine]), 'done, so nothing to wait for').to.equal(undefined);
  });

  it('stops waiting after its bound when the write never says it is done', async () => {
    const here = new AppliedHere({ now: clock });
    const mine = at(1);
    here.applying('keys', [mine]);
    const started = performance.now();
    await here.settled('keys', [mine], 20);
    expect(performance.now() - started).to.be.at.least(15);
  });

  it('keeps a later write of the same event marked when an earlier one finishes', async () => {
    const here = new AppliedHere({ now: clock });
    const mine = at(1);
    const first = here.applying('keys', [mine]);
    const second = here.applying('keys', [mine]);
    first();
    const waiting = here.settled('keys', [mine]);
    expect(waiting, 'the second write is still going on').to.not.equal(undefined);
    second();
    await waiting;
    expect(here.settled('keys', [mine])).to.equal(undefined);
  });

  it('marks the events for as long as the work during them runs, and settles them when it fails too', async () => {
    const here = new AppliedHere({ now: clock });
    const mine = at(1);
    let finish!: () => void;
    const work = here.during('keys', [mine], () => new Promise<string>((resolve) => (finish = () => resolve('written'))));
    const waiting = here.settled('keys', [mine]);
    expect(waiting, 'marked while the work runs').to.not.equal(undefined);
    finish();
    expect(await work).to.equal('written');
    await waiting;
    expect(here.settled('keys', [mine])).to.equal(undefined);

    const failing = here.during('keys', [mine], async () => {
      throw new Error('the publish failed');
    });
    await failing.then(
      () => expect.fail("the failure is the caller's"),
      (err: Error) => expect(err.message).to.equal('the publish failed'),
    );
    expect(here.settled('keys', [mine]), 'settled after the failure').to.equal(undefined);
  });
});
