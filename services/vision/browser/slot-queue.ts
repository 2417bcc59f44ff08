import { CaptureError } from './capture-error.ts';

/**
 * At most `slots` holders at once, at most `maxQueue` waiting in arrival order; beyond that a request
 * is refused at once (POOL_BUSY) rather than piling up behind a slow site. A waiter that does not get
 * a slot within its own wait bound is refused too, and leaves the queue.
 */

export type Release = () => void;

interface Waiter {
  readonly grant: (release: Release) => void;
  readonly refuse: (error: CaptureError) => void;
  readonly timer: NodeJS.Timeout;
}

export class SlotQueue {
  readonly slots: number;
  readonly maxQueue: number;
  #held = 0;
  #closed = false;
  readonly #waiters: Waiter[] = [];

  constructor(slots: number, maxQueue: number) {
    if (!Number.isInteger(slots) || slots < 1) throw new RangeError(`slots must be a positive integer, got ${slots}`);
    if (!Number.isInteger(maxQueue) || maxQueue < 0) throw new RangeError(`maxQueue must be a non-negative integer, got ${maxQueue}`);
    this.slots = slots;
    this.maxQueue = maxQueue;
  }

  get held(): number {
    return this.#held;
  }

  get queued(): number {
    return this.#waiters.length;
  }

  /** Resolves with the function that gives the slot back (idempotent). */
  acquire(waitMs: number): Promise<Release> {
    if (this.#closed) return Promise.reject(new CaptureError('POOL_CLOSED', 'the browser pool is closed'));
    if (this.#held < this.slots) {
      this.#held++;
      return Promise.resolve(this.#releaser());
    }
    if (this.#waiters.length >= this.maxQueue) {
      return Promise.reject(new CaptureError('POOL_BUSY', `all ${this.slots} browser slots are busy and ${this.maxQueue} requests are already waiting`));
    }
    return new Promise<Release>((grant, refuse) => {
      const waiter: Waiter = {
        grant,
        refuse,
        timer: setTimeout(() => {
          this.#drop(waiter);
          refuse(new CaptureError('POOL_BUSY', `no browser slot became free within ${waitMs} ms`));
        }, Math.max(0, waitMs)),
      };
      this.#waiters.push(waiter);
    });
  }

  /** Refuses every waiter; later acquires fail. Holders keep their slots until they release. */
  close(): void {
    this.#closed = true;
    for (const waiter of this.#waiters.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.refuse(new CaptureError('POOL_CLOSED', 'the browser pool closed while this request waited'));
    }
  }

  #releaser(): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiters.shift();
      if (next === undefined) {
        this.#held--;
        return;
      }
      clearTimeout(next.timer);
      next.grant(this.#releaser()); // the slot passes straight on: #held is unchanged
    };
  }

  #drop(waiter: Waiter): void {
    const index = this.#waiters.indexOf(waiter);
    if (index >= 0) this.#waiters.splice(index, 1);
  }
}
