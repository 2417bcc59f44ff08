import { expect } from 'chai';
import { SendLine } from '../../../events/send-line.ts';

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

const ticks = () => isSettled(Promise.resolve());

/** A send through `line` whose broker answers, and whose caller gives up, on cue. */
function publish(line: SendLine, topics: string[]) {
  const caller = new AbortController();
  const broker = pending();
  let started = false;
  const result = line.run(topics, caller.signal, () => {
    started = true;
    return broker.promise;
  });
  result.catch(() => undefined);
  return { result, broker, giveUp: () => caller.abort(), started: () => started };
}

describe('SendLine (unit)', () => {
  it('starts a send at once on a quiet topic, and holds nothing once it settled', async () => {
    const line = new SendLine();
    const p = publish(line, ['a']);
    await ticks();
    expect([p.started(), line.holds(['a']), line.size]).to.deep.equal([true, true, 1]);
    p.broker.resolve();
    expect(await isSettled(p.result)).to.equal(true);
    expect([line.holds(['a']), line.size]).to.deep.equal([false, 0]);
  });

  it('starts a send only once the one before it on its topic settled, though nobody gave up on that one', async () => {
    const line = new SendLine();
    const first = publish(line, ['a']);
    const second = publish(line, ['a']);
    await ticks();
    expect([first.started(), second.started()]).to.deep.equal([true, false]);
    first.broker.reject(new Error('refused'));
    await ticks();
    expect(second.started(), 'a failed send settled too').to.equal(true);
  });

  it('holds a send given up on after it started against each of its topics until it lands, and counts it', async () => {
    const counts = { abandoned: 0, settled: 0 };
    const line = new SendLine({ abandoned: () => counts.abandoned++, settled: () => counts.settled++ });
    const first = publish(line, ['a', 'b']);
    await ticks();
    first.giveUp();
    expect([line.holds(['a']), line.holds(['b']), line.holds(['c']), line.holds(['c', 'b'])]).to.deep.equal([true, true, false, true]);
    expect([line.size, counts.abandoned, counts.settled]).to.deep.equal([1, 1, 0]);

    const next = publish(line, ['b']);
    expect(await isSettled(next.result)).to.equal(false);
    expect(next.started(), 'a later send on its topic waits for it').to.equal(false);
    first.broker.resolve();
    await ticks();
    expect([next.started(), counts.settled]).to.deep.equal([true, 1]);
    next.broker.resolve();
    await ticks();
    expect([line.holds(['a']), line.holds(['b']), line.size]).to.deep.equal([false, false, 0]);
    expect(counts, 'a send that settled before anyone gave up on it is not counted').to.deep.equal({ abandoned: 1, settled: 1 });
  });

  it('never starts a send whose caller gave up while it waited: it would only add a late copy', async () => {
    const line = new SendLine();
    const first = publish(line, ['a']);
    const second = publish(line, ['a']);
    await ticks();
    second.giveUp();
    first.broker.resolve();
    expect(await isSettled(second.result)).to.equal(true);
    expect(second.started()).to.equal(false);
    expect(line.size).to.equal(0);
  });

  it('lets a caller who gave up while waiting go at once, though the send ahead of it is still unsettled', async () => {
    const line = new SendLine();
    const first = publish(line, ['a']);
    const second = publish(line, ['a']);
    await ticks();
    second.giveUp();
    expect(await isSettled(second.result)).to.equal(true);
    expect([second.started(), line.size]).to.deep.equal([false, 1]);
    first.broker.resolve();
    await ticks();
    expect([second.started(), line.size]).to.deep.equal([false, 0]);
  });

  it('lets a caller who had already given up when it reached a busy line go at once', async () => {
    const line = new SendLine();
    publish(line, ['a']);
    await ticks();
    const gone = new AbortController();
    gone.abort();
    let started = false;
    const late = line.run(['a'], gone.signal, async () => void (started = true));
    late.catch(() => undefined);
    expect(await isSettled(late)).to.equal(true);
    expect(started).to.equal(false);
  });

  it('does not count a send given up on after it settled', async () => {
    const counts = { abandoned: 0 };
    const line = new SendLine({ abandoned: () => counts.abandoned++ });
    const p = publish(line, ['a']);
    p.broker.resolve();
    await isSettled(p.result);
    p.giveUp();
    expect([line.holds(['a']), counts.abandoned]).to.deep.equal([false, 0]);
  });

  it('does not make a topic wait for sends on other topics', async () => {
    const line = new SendLine();
    publish(line, ['a']);
    const other = publish(line, ['b']);
    await ticks();
    expect(other.started()).to.equal(true);
  });

  it('lets the waiting sends go one at a time, in the order they came', async () => {
    const line = new SendLine();
    const sends = [publish(line, ['a']), publish(line, ['b', 'a']), publish(line, ['a'])];
    await ticks();
    expect(sends.map((s) => s.started())).to.deep.equal([true, false, false]);
    sends[0]!.broker.resolve();
    await ticks();
    expect(sends.map((s) => s.started())).to.deep.equal([true, true, false]);
    sends[1]!.broker.resolve();
    await ticks();
    expect(sends.map((s) => s.started())).to.deep.equal([true, true, true]);
  });
});
