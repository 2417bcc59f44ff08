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

  it('wants sane sizes', () => {
    expect(() => new SlotQueue(0, 1)).to.throw(RangeError);
    expect(() => new SlotQueue(1, -1)).to.throw(RangeError);
  });
});
