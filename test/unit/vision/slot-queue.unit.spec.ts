import { expect } from 'chai';
import { isCaptureError } from '../../../services/vision/browser/capture-error.ts';
import { SlotQueue } from '../../../services/vision/browser/slot-queue.ts';

const settled = async <T>(promise: Promise<T>): Promise<'pending' | 'resolved' | 'rejected'> => {
  let state: 'pending' | 'resolved' | 'rejected' = 'pending';
  promise.then(
    () => (state = 'resolved'),
    () => (state = 'rejected'),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return state;
};

describe('Browser slot queue (unit)', () => {
  it('grants up to N slots, queues the next ones in order and hands a released slot straight on', async () => {
    const queue = new SlotQueue(2, 2);
    const first = await queue.acquire(1000);
    await queue.acquire(1000);
    const third = queue.acquire(1000);
    const fourth = queue.acquire(1000);
    expect([queue.held, queue.queued]).to.deep.equal([2, 2]);
    expect(await settled(third)).to.equal('pending');

    first();
    first(); // releasing twice gives back one slot only
    expect(await settled(third)).to.equal('resolved');
    expect(await settled(fourth)).to.equal('pending');
    expect([queue.held, queue.queued]).to.deep.equal([2, 1]);
    (await third)();
    (await fourth)();
    expect([queue.held, queue.queued]).to.deep.equal([1, 0]);
  });

  it('refuses at once with POOL_BUSY when the queue is full', async () => {
    const queue = new SlotQueue(1, 1);
    await queue.acquire(1000);
    const waiting = queue.acquire(1000);
    const error = await queue.acquire(1000).catch((e: unknown) => e);
    expect(isCaptureError(error, 'POOL_BUSY')).to.equal(true);
    queue.close();
    await waiting.catch(() => undefined);
  });

  it('refuses a waiter whose wait bound passes, and forgets it', async () => {
    const queue = new SlotQueue(1, 5);
    const held = await queue.acquire(1000);
    const error = await queue.acquire(5).catch((e: unknown) => e);
    expect(isCaptureError(error, 'POOL_BUSY')).to.equal(true);
    expect(queue.queued).to.equal(0);
    held();
    expect(queue.held).to.equal(0);
  });

  it('refuses waiting and later requests with POOL_CLOSED once closed', async () => {
    const queue = new SlotQueue(1, 5);
    await queue.acquire(1000);
    const waiting = queue.acquire(1000).catch((e: unknown) => e);
    queue.close();
    expect(isCaptureError(await waiting, 'POOL_CLOSED')).to.equal(true);
    expect(isCaptureError(await queue.acquire(1000).catch((e: unknown) => e), 'POOL_CLOSED')).to.equal(true);
  });

  it("serves another tenant's request before a tenant's backlog", async () => {
    const queue = new SlotQueue(1, 10);
    const order: string[] = [];
    // Each holder gives its slot back on the next turn of the loop, once all five have asked.
    const take = (tenant: string, name: string) =>
      queue.acquire(1000, tenant).then((release) => {
        order.push(name);
        setImmediate(release);
      });
    await Promise.all([take('a', 'a1'), take('a', 'a2'), take('a', 'a3'), take('a', 'a4'), take('b', 'b1')]);
    expect(order).to.deep.equal(['a1', 'b1', 'a2', 'a3', 'a4']);
  });

  it('gives a tenant no more than its share of slots while another waits, and every slot when alone', async () => {
    const queue = new SlotQueue(2, 10, 1);
    const a1 = await queue.acquire(1000, 'a');
    const a2 = await queue.acquire(1000, 'a'); // alone: both slots
    expect(queue.holding('a')).to.equal(2);
    const a3 = queue.acquire(1000, 'a');
    const b1 = queue.acquire(1000, 'b');
    a1();
    expect(await settled(b1)).to.equal('resolved');
    expect(await settled(a3)).to.equal('pending');
    (await b1)(); // no one else waits: a3 may take a second slot
    expect(await settled(a3)).to.equal('resolved');
    expect(queue.holding('a')).to.equal(2);
    const a4 = queue.acquire(1000, 'a');
    const b2 = queue.acquire(1000, 'b');
    a2(); // a holds one, its share, while b waits: b goes first
    expect(await settled(b2)).to.equal('resolved');
    expect(await settled(a4)).to.equal('pending');
    (await a3)();
    expect(await settled(a4)).to.equal('resolved');
    (await a4)();
    (await b2)();
    expect([queue.held, queue.queued]).to.deep.equal([0, 0]);
  });

  it("bounds each tenant's waiting list, not everyone's", async () => {
    const queue = new SlotQueue(1, 1);
    const held = await queue.acquire(1000, 'a');
    const a2 = queue.acquire(1000, 'a');
    const a3 = await queue.acquire(1000, 'a').catch((e: unknown) => e);
    expect(isCaptureError(a3, 'POOL_BUSY')).to.equal(true);
    const b1 = queue.acquire(1000, 'b');
    expect(queue.queued).to.equal(2);
    held();
    (await b1)();
    (await a2)();
  });

  it('wants sane sizes', () => {
    expect(() => new SlotQueue(0, 1)).to.throw(RangeError);
    expect(() => new SlotQueue(1, -1)).to.throw(RangeError);
    expect(() => new SlotQueue(1, 1, 0)).to.throw(RangeError);
  });
});
