import { expect } from 'chai';
import { AbandonedSends } from '../../../events/abandoned-sends.ts';

/** A send settled from outside, as a retried send settles when the broker finally answers. */
function pending() {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/** Whether `promise` settled once every settled send's handlers ran. */
async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 10; i++) await Promise.resolve();
  return done;
}

/** Starts a send through `sends` whose caller gives up (aborts) on cue; `started` says whether it was sent. */
function publish(sends: AbandonedSends, topics: string[]) {
  const caller = new AbortController();
  const broker = pending();
  let started = false;
  const result = sends.run(topics, caller.signal, () => {
    started = true;
    return broker.promise;
  });
  result.catch(() => undefined);
  return { result, broker, giveUp: () => caller.abort(), started: () => started };
}

describe('AbandonedSends (unit)', () => {
  it('sends at once when nothing was abandoned, and holds nothing after', async () => {
    const sends = new AbandonedSends();
    const p = publish(sends, ['a']);
    expect(await isSettled(Promise.resolve()), 'ticks').to.equal(true);
    expect(p.started()).to.equal(true);
    p.broker.resolve();
    expect(await isSettled(p.result)).to.equal(true);
    expect([sends.holds(['a']), sends.size]).to.deep.equal([false, 0]);
  });

  it('holds a send given up on after it started, against each of its topics, until it lands', async () => {
    const counts = { abandoned: 0, settled: 0 };
    const sends = new AbandonedSends({ abandoned: () => counts.abandoned++, settled: () => counts.settled++ });
    const first = publish(sends, ['a', 'b']);
    await isSettled(Promise.resolve());
    first.giveUp();
    expect([sends.holds(['a']), sends.holds(['b']), sends.holds(['c']), sends.holds(['c', 'b'])]).to.deep.equal([true, true, false, true]);
    expect([sends.size, counts.abandoned, counts.settled]).to.deep.equal([1, 1, 0]);

    const next = publish(sends, ['b']);
    expect(await isSettled(next.result)).to.equal(false);
    expect(next.started(), 'a later send on its topic waits for it').to.equal(false);
    first.broker.resolve();
    await isSettled(Promise.resolve());
    expect(next.started()).to.equal(true);
    expect([sends.holds(['a']), sends.holds(['b']), sends.size, counts.settled]).to.deep.equal([false, false, 0, 1]);
  });

  it('never starts a send whose caller gave up while it waited: it would only add a late copy', async () => {
    const sends = new AbandonedSends();
    const first = publish(sends, ['a']);
    await isSettled(Promise.resolve());
    first.giveUp();
    const second = publish(sends, ['a']);
    await isSettled(Promise.resolve());
    second.giveUp();
    first.broker.reject(new Error('not retriable'));
    expect(await isSettled(second.result)).to.equal(true);
    expect(second.started()).to.equal(false);
    expect(sends.size).to.equal(0);
  });

  it('does not hold a send that settled before its caller gave up', async () => {
    const sends = new AbandonedSends();
    const p = publish(sends, ['a']);
    p.broker.resolve();
    await isSettled(p.result);
    p.giveUp();
    expect(sends.holds(['a'])).to.equal(false);
  });

  it('does not make a topic wait for sends on other topics', async () => {
    const sends = new AbandonedSends();
    const first = publish(sends, ['a']);
    await isSettled(Promise.resolve());
    first.giveUp();
    const other = publish(sends, ['b']);
    await isSettled(Promise.resolve());
    expect(other.started()).to.equal(true);
  });

  it('waits for every send on the topic, including one abandoned while it waited', async () => {
    const sends = new AbandonedSends();
    // Both in flight together; the first is given up on, and the second only once a publish waits.
    const [first, second] = [publish(sends, ['a']), publish(sends, ['a'])];
    await isSettled(Promise.resolve());
    expect([first.started(), second.started()]).to.deep.equal([true, true]);
    first.giveUp();
    const third = publish(sends, ['b', 'a']);
    second.giveUp();
    expect(sends.size).to.equal(2);
    first.broker.resolve();
    expect(await isSettled(third.result)).to.equal(false);
    expect(third.started(), 'the send abandoned while it waited is waited for too').to.equal(false);
    second.broker.resolve();
    await isSettled(Promise.resolve());
    expect(third.started()).to.equal(true);
  });
});
