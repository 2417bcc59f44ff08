import type { DeliveredEvent, Event } from './envelope.ts';

/** How long an event applied here is remembered: a projection's consumer reaches it within seconds. */
export const APPLIED_HERE_MS = 30_000;
/** Documents remembered at most; past it the oldest are forgotten (a forgotten one is only read again). */
export const APPLIED_HERE_DOCUMENTS = 10_000;
/** Events remembered per document: those of one chunk, and a few after it. */
const EVENTS_PER_DOCUMENT = 8;
/** How long a consumer waits for this process's own write of an event before reading for itself. */
export const APPLYING_WAIT_MS = 2000;

interface Entry {
  events: string[];
  until: number;
}

/**
 * The events this process applied to projection documents lately, by collection namespace and
 * document id. A service that applies its own event at once for read-your-writes leaves the
 * projection's consumer nothing to do with that event but read the document to learn so; where both
 * run in one process the consumer skips it without the read, a database command fewer per event on
 * the hot paths that publish and apply (issue 37).
 *
 * An event is named by its id and its position, so only that very record is skipped: another event
 * at the same offset (a topic made again) is not. What was applied stays applied, since a document's
 * positions only grow; the one exception is a collection emptied under a live process, which svc
 * replay never does (it swaps a rebuilt collection in, with every event up to its catch-up). Entries
 * end after APPLIED_HERE_MS all the same, and a process forgets them all on restart: nothing here is
 * needed for correctness, only to save the read.
 *
 * The consumer often has the event while the service is still writing it (both start when the
 * publish is acknowledged), so the service marks its events as being applied before it publishes
 * them, and the consumer waits for that write (up to APPLYING_WAIT_MS) instead of racing it: a race
 * cost a read on each side and, when the consumer won, a refused write and a read for the service.
 */
export class AppliedHere {
  readonly #entries = new Map<string, Entry>();
  /** Events this process is publishing and applying itself, by projection and event id: settled when it is done either way. */
  readonly #applying = new Map<string, Promise<void>>();
  readonly #ttlMs: number;
  readonly #maxDocuments: number;
  readonly #now: () => number;

  constructor(options: { ttlMs?: number; maxDocuments?: number; now?: () => number } = {}) {
    this.#ttlMs = options.ttlMs ?? APPLIED_HERE_MS;
    this.#maxDocuments = options.maxDocuments ?? APPLIED_HERE_DOCUMENTS;
    this.#now = options.now ?? Date.now;
  }

  /** Notes that the document holds these events: written by this process, or found there by it. */
  note(namespace: string, id: string, events: readonly DeliveredEvent[]): void {
    const key = entryKey(namespace, id);
    const held = this.#entries.get(key);
    const names = events.map(eventName);
    const kept = held && held.until > this.#now() ? [...held.events.filter((e) => !names.includes(e)), ...names] : names;
    // Re-inserted, so the map's order stays the order of last use and the oldest go first.
    this.#entries.delete(key);
    this.#entries.set(key, { events: kept.slice(-EVENTS_PER_DOCUMENT), until: this.#now() + this.#ttlMs });
    while (this.#entries.size > this.#maxDocuments) this.#entries.delete(this.#entries.keys().next().value!);
  }

  /** Whether this process applied this very event (id and position) to the document lately. */
  has(namespace: string, id: string, event: DeliveredEvent): boolean {
    const key = entryKey(namespace, id);
    const held = this.#entries.get(key);
    if (!held) return false;
    if (held.until <= this.#now()) {
      this.#entries.delete(key);
      return false;
    }
    return held.events.includes(eventName(event));
  }

  /**
   * Marks events this process will publish and then apply itself to a projection (its logical
   * collection name: only that projection's consumer waits); call the function returned once that
   * is done or has failed (a finally block), whatever the outcome.
   */
  applying(projection: string, events: readonly Event[]): () => void {
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    const ids = events.map((e) => markKey(projection, e));
    for (const id of ids) this.#applying.set(id, settled);
    return () => {
      for (const id of ids) if (this.#applying.get(id) === settled) this.#applying.delete(id);
      settle();
    };
  }

  /**
   * Runs `work`, which publishes these events and applies them to the projection, with them marked
   * as applying (applying() and its settle in one): the projection's consumer here waits for it
   * instead of racing it, whatever the outcome.
   */
  async during<T>(projection: string, events: readonly Event[], work: () => Promise<T>): Promise<T> {
    const settle = this.applying(projection, events);
    try {
      return await work();
    } finally {
      settle();
    }
  }

  /**
   * Resolves once this process is not applying any of these events to the projection itself (at most
   * after `waitMs`); undefined, costing nothing, when it applies none of them.
   */
  settled(projection: string, events: readonly Event[], waitMs = APPLYING_WAIT_MS): Promise<void> | undefined {
    if (this.#applying.size === 0) return undefined;
    const pending: Promise<void>[] = [];
    for (const e of events) {
      const settled = this.#applying.get(markKey(projection, e));
      if (settled && !pending.includes(settled)) pending.push(settled);
    }
    if (pending.length === 0) return undefined;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)));
    return Promise.race([Promise.all(pending).then(() => undefined), timeout]).finally(() => clearTimeout(timer));
  }

  /** Forgets every document: a collection was swapped for a rebuilt one under its name. */
  forget(): void {
    this.#entries.clear();
  }

  get size(): number {
    return this.#entries.size;
  }
}

const entryKey = (namespace: string, id: string): string => `${namespace}\u0000${id}`;

const markKey = (projection: string, event: Event): string => `${projection}\u0000${event.metadata.eventId}`;

const eventName = (event: DeliveredEvent): string =>
  `${event.metadata.eventId}@${event.position.topic}/${event.position.partition}/${event.position.offset}`;

/**
 * The events this process applied (or found applied) lately, per document, and those it is applying
 * itself: shared by every projection writer of the process.
 */
export const appliedHere = new AppliedHere();
