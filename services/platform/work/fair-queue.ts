/**
 * Waiting work, one FIFO per tenant, served to the tenant served longest ago: a tenant with a
 * thousand items waiting delays another tenant's next item by at most one item per other waiting
 * tenant, not by its whole backlog, and a tenant that has just been served waits behind one that
 * has not. Bounded per tenant, so one tenant cannot fill the memory of everyone.
 */
export class FairQueue<T> {
  readonly #perTenant: number;
  readonly #queues = new Map<string, T[]>();
  /** Tenants with items waiting, in the order they started waiting. */
  #order: string[] = [];
  /** When each tenant was last served (a counter); forgotten past `#memory` tenants. */
  readonly #served = new Map<string, number>();
  #clock = 0;
  static readonly #memory = 10_000;

  constructor(perTenant: number) {
    this.#perTenant = Math.max(1, perTenant);
  }

  get size(): number {
    let n = 0;
    for (const q of this.#queues.values()) n += q.length;
    return n;
  }

  /** Items waiting for one tenant. */
  waiting(tenant: string): number {
    return this.#queues.get(tenant)?.length ?? 0;
  }

  /** False (nothing queued) when the tenant already has its bound of items waiting. */
  push(tenant: string, item: T): boolean {
    let queue = this.#queues.get(tenant);
    if (!queue) {
      queue = [];
      this.#queues.set(tenant, queue);
      this.#order.push(tenant);
    }
    if (queue.length >= this.#perTenant) return false;
    queue.push(item);
    return true;
  }

  /** The next item of the tenant served longest ago, skipping tenants `busy` says may not take one now. */
  shift(busy: (tenant: string) => boolean = () => false): T | undefined {
    let pick = -1;
    let pickServed = Infinity;
    for (let i = 0; i < this.#order.length; i++) {
      const tenant = this.#order[i] as string;
      const served = this.#served.get(tenant) ?? -1;
      if (served < pickServed && !busy(tenant)) {
        pick = i;
        pickServed = served;
      }
    }
    if (pick < 0) return undefined;
    const tenant = this.#order[pick] as string;
    const queue = this.#queues.get(tenant) as T[];
    const item = queue.shift() as T;
    this.#order.splice(pick, 1);
    if (queue.length > 0) this.#order.push(tenant);
    else this.#queues.delete(tenant);
    this.#served.delete(tenant);
    this.#served.set(tenant, this.#clock++);
    if (this.#served.size > FairQueue.#memory) this.#served.delete(this.#served.keys().next().value as string);
    return item;
  }

  /** Takes out one item (a caller gave up waiting); true if it was there. */
  remove(tenant: string, item: T): boolean {
    const queue = this.#queues.get(tenant);
    const at = queue?.indexOf(item) ?? -1;
    if (!queue || at < 0) return false;
    queue.splice(at, 1);
    if (queue.length === 0) {
      this.#queues.delete(tenant);
      this.#order = this.#order.filter((t) => t !== tenant);
    }
    return true;
  }

  /** Empties the queue, handing back everything that waited. */
  drain(): T[] {
    const all = [...this.#queues.values()].flat();
    this.#queues.clear();
    this.#order = [];
    return all;
  }
}
