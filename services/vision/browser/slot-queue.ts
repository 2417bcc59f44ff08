import { FairQueue } from '../../platform/work/fair-queue.ts';
import { CaptureError } from './capture-error.ts';

/**
 * At most `slots` holders at once. Waiting requests are served round-robin per tenant (a customer),
 * not in arrival order: a customer's suite of twenty 30-second captures delays another customer's
 * one capture by at most one capture per slot, not by its whole backlog. While others wait, a
 * tenant is given no more than `perTenant` slots; when no one else waits it may use them all.
 * At most `maxQueue` requests of one tenant wait; beyond that its request is refused at once
 * (POOL_BUSY) rather than piling up behind a slow site. A waiter that does not get a slot within its
 * own wait bound is refused too, and leaves the queue.
 */

export type Release = () => void;

interface Waiter {
  readonly tenant: string;
  readonly grant: (release: Release) => void;
  readonly refuse: (error: CaptureError) => void;
  timer: NodeJS.Timeout | undefined;
}

export class SlotQueue {
  readonly slots: number;
  /** Waiting requests allowed per tenant. */
  readonly maxQueue: number;
  /** Slots one tenant may hold while another tenant waits. */
  readonly perTenant: number;
  #held = 0;
  #closed = false;
  readonly #waiters: FairQueue<Waiter>;
  readonly #holding = new Map<string, number>();

  constructor(slots: number, maxQueue: number, perTenant = slots) {
    if (!Number.isInteger(slots) || slots < 1) throw new RangeError(`slots must be a positive integer, got ${slots}`);
    if (!Number.isInteger(maxQueue) || maxQueue < 0) throw new RangeError(`maxQueue must be a non-negative integer, got ${maxQueue}`);
    if (!Number.isInteger(perTenant) || perTenant < 1) throw new RangeError(`perTenant must be a positive integer, got ${perTenant}`);
    this.slots = slots;
    this.maxQueue = maxQueue;
    this.perTenant = Math.min(perTenant, slots);
    this.#waiters = new FairQueue<Waiter>(maxQueue);
  }

  get held(): number {
    return this.#held;
  }

  get queued(): number {
    return this.#waiters.size;
  }

  /** Slots a tenant holds now. */
  holding(tenant: string): number {
    return this.#holding.get(tenant) ?? 0;
  }

  /** Resolves with the function that gives the slot back (idempotent). `tenant`: whose request (default: one shared tenant). */
  acquire(waitMs: number, tenant = ''): Promise<Release> {
    if (this.#closed) return Promise.reject(new CaptureError('POOL_CLOSED', 'the browser pool is closed'));
    // Even a request that a free slot awaits goes through the queue: being served is what puts a
    // tenant behind the others next time.
    return new Promise<Release>((grant, refuse) => {
      const waiter: Waiter = { tenant, grant, refuse, timer: undefined };
      if ((this.maxQueue === 0 && this.#held >= this.slots) || !this.#waiters.push(tenant, waiter)) {
        refuse(
          new CaptureError(
            'POOL_BUSY',
            `all ${this.slots} browser slots are busy and ${this.maxQueue} requests of this customer are already waiting`,
          ),
        );
        return;
      }
      waiter.timer = setTimeout(
        () => {
          if (!this.#waiters.remove(tenant, waiter)) return;
          refuse(new CaptureError('POOL_BUSY', `no browser slot became free within ${waitMs} ms`));
        },
        Math.max(0, waitMs),
      );
      this.#dispatch();
    });
  }

  /** Refuses every waiter; later acquires fail. Holders keep their slots until they release. */
  close(): void {
    this.#closed = true;
    for (const waiter of this.#waiters.drain()) {
      clearTimeout(waiter.timer);
      waiter.refuse(new CaptureError('POOL_CLOSED', 'the browser pool closed while this request waited'));
    }
  }

  #take(tenant: string): Release {
    this.#held++;
    this.#holding.set(tenant, this.holding(tenant) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#held--;
      const n = this.holding(tenant) - 1;
      if (n > 0) this.#holding.set(tenant, n);
      else this.#holding.delete(tenant);
      this.#dispatch();
    };
  }

  /** Free slots to waiters: the tenant served longest ago among those under their share, else (no one else waits) anyone. */
  #dispatch(): void {
    while (!this.#closed && this.#held < this.slots && this.#waiters.size > 0) {
      const next = this.#waiters.shift((tenant) => this.holding(tenant) >= this.perTenant) ?? this.#waiters.shift();
      if (!next) return;
      clearTimeout(next.timer);
      next.grant(this.#take(next.tenant));
    }
  }
}
