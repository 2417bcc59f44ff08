import { isDeepStrictEqual } from 'node:util';
import type { Document } from 'mongodb';
import { partitionKey, type DeliveredEvent } from './envelope.ts';
import { applyStored, projectedFields, type Projection, type StoredDocument } from './projection.ts';

/**
 * A projection's documents held in process and kept current from the log, so a hot read path
 * (key validation) reads memory instead of the database.
 *
 * A document is loaded from MongoDB once, then every event the cache's feed delivers for it is
 * applied in memory with the runner's own step (applyStored: same evolve, same redelivery and
 * re-publish guards), so the cached document is the one the database holds or is about to.
 *
 * Applying is only exact if the loaded document already contains every event the feed will not
 * deliver again: those before the feed's start and those it handled before the load began. The
 * cache knows how far its feed got per partition, and how far the projection's consumer group has
 * committed (polled from Kafka); a load made while the projection was at or past the feed is
 * trusted for `trustedTtlMs`. Otherwise (the projection lagging, the feed not live yet or
 * restarting) the entry lives `untrustedTtlMs`, the short cache this replaces. Events the feed
 * handles while a load is in flight are applied to its result.
 *
 * Readers never queue behind the backstop: a trusted entry is reloaded in the background at a point
 * between half and nine tenths of its lifetime, drawn per entry so that entries loaded together do
 * not reload together, and is served meanwhile. One not read during that stretch (a key idle for a
 * minute) is still served, once more and while it reloads, until `trustedStaleMs`: the events kept
 * it as current as ever, and without this every idle key cost its next request a database read,
 * all at once when traffic came back (bench:validate: 176 reads in one burst, p99 282 ms). Only
 * entries older than that, or untrusted ones past their short lifetime, are read through.
 * Concurrent misses of one id share one load.
 */
export interface ProjectionCacheOptions {
  /** Reads a stored document by id (bookkeeping included): how entries are loaded and refreshed. */
  load: (id: string) => Promise<StoredDocument<Document> | null>;
  /**
   * Reads several stored documents by id in one query (those that exist): with it, the background
   * refreshes due within `refreshBatchMs` of each other go out as one read instead of one each.
   */
  loadMany?: (ids: readonly string[]) => Promise<StoredDocument<Document>[]>;
  /**
   * How long a background refresh waits for others to join its read (default 2 s). Entries are
   * served meanwhile, so the wait costs nothing but staleness the events already cover; and FerretDB
   * answers `_id: {$in: …}` by scanning the whole collection, so each read costs the same however
   * few ids it carries. At 25 ms, bench:validate's 612 keys refreshed in about 400 reads a minute,
   * three quarters of FerretDB's CPU during the run (issue 37).
   */
  refreshBatchMs?: number;
  /** Lifetime of an entry loaded in step with the projection; a backstop, since events keep it current. */
  trustedTtlMs?: number;
  /** Past its lifetime, how long a trusted entry is still served while it reloads (default 5 lifetimes). */
  trustedStaleMs?: number;
  /** Lifetime of any other entry. */
  untrustedTtlMs?: number;
  maxEntries?: number;
  /** The clock, for tests. */
  now?: () => number;
  /** Where in its lifetime each entry is refreshed, for tests (default Math.random). */
  random?: () => number;
}

/** A topic-partition and an offset in it. */
export interface PartitionOffset {
  topic: string;
  partition: number;
  offset: bigint;
}

/** What a cache feed drives: the cache's side of following the log. */
export interface FeedFollower {
  readonly topics: ReadonlySet<string>;
  apply(events: readonly DeliveredEvent[]): void;
  feedStartsAt(positions: readonly PartitionOffset[]): void;
  projectionCommitted(positions: readonly PartitionOffset[]): void;
  setLive(live: boolean): void;
}

interface Entry<D> {
  stored: StoredDocument<Document> | null;
  /** The projected fields of `stored`, made on first read after each change. */
  view: D | null | undefined;
  at: number;
  trusted: boolean;
  /** Age at which a trusted entry is reloaded in the background. */
  refreshAfter: number;
}

/** The load in flight for this key if there is one, else a new one, forgotten once settled: concurrent misses share it. */
export function sharedLoad<T>(loads: Map<string, Promise<T>>, key: string, start: () => Promise<T>): Promise<T> {
  let pending = loads.get(key);
  if (!pending) {
    pending = start().finally(() => loads.delete(key));
    loads.set(key, pending);
  }
  return pending;
}

/** Events the feed handled while loads were in flight; more than this and those loads are not trusted. */
const MAX_BUFFERED = 10_000;
/** Ids per batched refresh read: large, since on FerretDB a read's cost is the collection's size, not the ids'. */
const REFRESH_BATCH = 1000;

export class ProjectionCache<D extends Document> implements FeedFollower {
  readonly projection: Projection<D>;
  readonly #topics: ReadonlySet<string>;
  readonly #handles: ReadonlySet<string>;
  readonly #trustedTtlMs: number;
  readonly #trustedStaleMs: number;
  readonly #untrustedTtlMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;
  readonly #random: () => number;
  readonly #load: (id: string) => Promise<StoredDocument<Document> | null>;
  readonly #loadMany: ProjectionCacheOptions['loadMany'];
  readonly #refreshBatchMs: number;
  /** Ids whose background refresh waits for the next batched read, or is in it. */
  readonly #refreshing = new Set<string>();
  #refreshQueue: string[] = [];
  #refreshTimer: NodeJS.Timeout | undefined;
  readonly #entries = new Map<string, Entry<D>>();
  readonly #loads = new Map<string, Promise<StoredDocument<Document> | null>>();
  /** Per partition of the projection's topics: the last offset the feed handled (or will not deliver). */
  readonly #seen = new Map<string, bigint>();
  /** Per partition: the projection group's committed offset, i.e. the next one it will apply. */
  readonly #applied = new Map<string, bigint>();
  #live = false;
  /** Events handled while loads were in flight, numbered so each load takes only those after its start. */
  #buffer: { seq: number; event: DeliveredEvent }[] = [];
  #seq = 0;
  #droppedThrough = 0;
  #loading = 0;

  constructor(projection: Projection<D>, topics: Iterable<string>, options: ProjectionCacheOptions) {
    this.projection = projection;
    this.#topics = new Set(topics);
    this.#handles = new Set(projection.handles);
    this.#trustedTtlMs = options.trustedTtlMs ?? 60_000;
    this.#trustedStaleMs = Math.max(this.#trustedTtlMs, options.trustedStaleMs ?? 5 * this.#trustedTtlMs);
    this.#untrustedTtlMs = options.untrustedTtlMs ?? 500;
    this.#maxEntries = options.maxEntries ?? 100_000;
    this.#now = options.now ?? Date.now;
    this.#random = options.random ?? Math.random;
    this.#load = options.load;
    this.#loadMany = options.loadMany;
    this.#refreshBatchMs = options.refreshBatchMs ?? 2000;
  }

  get topics(): ReadonlySet<string> {
    return this.#topics;
  }

  /** The document with this id, from memory when fresh, else loaded. */
  async get(id: string): Promise<D | null> {
    const hit = this.peekView(id);
    if (hit !== undefined) return hit;
    return projectedFields<D>(await this.#loadOnce(id));
  }

  /** The stored document if the cache holds a fresh one (null: known not to exist), else undefined. */
  peek(id: string): StoredDocument<Document> | null | undefined {
    return this.#fresh(id)?.stored;
  }

  /** The document's projected fields if the cache holds a fresh one (null: known not to exist), else undefined. */
  peekView(id: string): D | null | undefined {
    const entry = this.#fresh(id);
    if (!entry) return undefined;
    if (entry.view === undefined) entry.view = projectedFields<D>(entry.stored);
    return entry.view;
  }

  #fresh(id: string): Entry<D> | undefined {
    const entry = this.#entries.get(id);
    if (!entry) return undefined;
    const trusted = entry.trusted && this.#live;
    const age = this.#now() - entry.at;
    if (age >= (trusted ? this.#trustedStaleMs : this.#untrustedTtlMs)) {
      this.#entries.delete(id);
      return undefined;
    }
    // Past refreshAfter (and past the lifetime, up to trustedStaleMs): served while it reloads.
    if (trusted && age >= entry.refreshAfter && !this.#loads.has(id) && !this.#refreshing.has(id)) {
      if (this.#loadMany) this.#queueRefresh(id);
      else this.#loadOnce(id).catch(() => undefined);
    }
    return entry;
  }

  /**
   * A background refresh joins the next batched read. Entries loaded together (a burst of new keys,
   * a process's warm-up) come due together: one read per entry was a burst of queries the database
   * served in a queue beside the requests (issue 37).
   */
  #queueRefresh(id: string): void {
    this.#refreshing.add(id);
    this.#refreshQueue.push(id);
    if (this.#refreshTimer) return;
    this.#refreshTimer = setTimeout(() => {
      this.#refreshTimer = undefined;
      const queued = this.#refreshQueue;
      this.#refreshQueue = [];
      for (let i = 0; i < queued.length; i += REFRESH_BATCH) void this.#refreshMany(queued.slice(i, i + REFRESH_BATCH));
    }, this.#refreshBatchMs);
    this.#refreshTimer.unref();
  }

  async #refreshMany(ids: readonly string[]): Promise<void> {
    const startSeq = this.#seq;
    const inStep = this.#live && this.#projectionInStep();
    this.#loading++;
    let found: StoredDocument<Document>[] | undefined;
    try {
      found = await this.#loadMany!(ids);
    } catch {
      found = undefined; // served as they are; the next read past refreshAfter asks again
    } finally {
      this.#loading--;
      for (const id of ids) this.#refreshing.delete(id);
    }
    if (found) {
      const byId = new Map(found.map((doc) => [String(doc._id), doc]));
      for (const id of ids) this.#settle(id, byId.get(id) ?? null, startSeq, inStep);
    }
    if (this.#loading === 0) this.#buffer = [];
  }

  /** One load per id at a time, whoever asks. */
  #loadOnce(id: string): Promise<StoredDocument<Document> | null> {
    return sharedLoad(this.#loads, id, () => this.fill(() => this.#load(id), id));
  }

  /**
   * Loads a stored document and keeps it. `id` is the document's id when the caller knows it (a
   * load that finds nothing is then kept as "absent"); a load by another field passes none.
   */
  async fill(load: () => Promise<StoredDocument<Document> | null>, id?: string): Promise<StoredDocument<Document> | null> {
    const startSeq = this.#seq;
    const inStep = this.#live && this.#projectionInStep();
    this.#loading++;
    let stored: StoredDocument<Document> | null;
    try {
      stored = await load();
    } finally {
      this.#loading--;
    }
    const key = stored ? String(stored._id) : id;
    if (key !== undefined) stored = this.#settle(key, stored, startSeq, inStep);
    if (this.#loading === 0) this.#buffer = [];
    return stored;
  }

  /** Keeps a loaded document with the events the feed handled since its load began; returns it. */
  #settle(key: string, loaded: StoredDocument<Document> | null, startSeq: number, inStep: boolean): StoredDocument<Document> | null {
    let stored = loaded;
    for (const { seq, event } of this.#buffer) {
      if (seq > startSeq && this.#documentId(event) === key) stored = applyStored(this.projection, key, stored, event);
    }
    // Buffered events dropped before this load could see them: this load cannot be trusted.
    this.#put(key, stored, inStep && this.#droppedThrough <= startSeq);
    return stored;
  }

  /** The feed's events, in log order per partition: applied to the documents held. */
  apply(events: readonly DeliveredEvent[]): void {
    for (const event of events) {
      const { topic, partition, offset } = event.position;
      if (!this.#topics.has(topic)) continue;
      this.#seen.set(partitionKey(topic, partition), BigInt(offset));
      const id = this.#documentId(event);
      if (id === null) continue;
      if (this.#loading > 0) {
        this.#buffer.push({ seq: ++this.#seq, event });
        if (this.#buffer.length > MAX_BUFFERED) this.#droppedThrough = this.#buffer.shift()!.seq;
      }
      const entry = this.#entries.get(id);
      if (!entry) continue;
      const next = applyStored(this.projection, id, entry.stored, event);
      if (next !== entry.stored) {
        entry.stored = next;
        entry.view = undefined;
      }
    }
  }

  /** Where the feed starts: events before these offsets it will never deliver. */
  feedStartsAt(positions: readonly PartitionOffset[]): void {
    for (const p of positions) {
      if (!this.#topics.has(p.topic)) continue;
      const key = partitionKey(p.topic, p.partition);
      const before = p.offset - 1n;
      if ((this.#seen.get(key) ?? -1n) < before) this.#seen.set(key, before);
    }
  }

  /** The projection group's committed offsets, as last polled. */
  projectionCommitted(positions: readonly PartitionOffset[]): void {
    for (const p of positions) if (this.#topics.has(p.topic)) this.#applied.set(partitionKey(p.topic, p.partition), p.offset);
  }

  /**
   * Live: the feed is joined and delivering. When it stops being live, entries fall back to the
   * short lifetime; those loaded while it was not are never trusted.
   */
  setLive(live: boolean): void {
    this.#live = live;
  }

  get live(): boolean {
    return this.#live;
  }

  get maxEntries(): number {
    return this.#maxEntries;
  }

  /** True when the projection has applied everything the feed has handled or skipped. */
  #projectionInStep(): boolean {
    for (const [key, seen] of this.#seen) {
      if (seen < 0n) continue;
      if ((this.#applied.get(key) ?? -1n) <= seen) return false;
    }
    return true;
  }

  #documentId(event: DeliveredEvent): string | null {
    return this.#handles.has(event.type) ? this.projection.documentId(event) : null;
  }

  #put(id: string, stored: StoredDocument<Document> | null, trusted: boolean): void {
    const held = this.#entries.get(id);
    this.#entries.delete(id);
    const refreshAfter = this.#trustedTtlMs * (0.5 + 0.4 * this.#random());
    if (held && isDeepStrictEqual(held.stored, stored)) {
      // A reload that found what is held (a background refresh, nearly always) keeps the objects
      // held and their view, and the loaded copy dies young. Replacing them made every refresh
      // promote a new document and view to V8's old generation and leave the old ones there as
      // garbage: with the counts' entries, what filled it fastest on /validate's path (issue 37).
      held.at = this.#now();
      held.trusted = trusted;
      held.refreshAfter = refreshAfter;
      this.#entries.set(id, held);
      return;
    }
    if (this.#entries.size >= this.#maxEntries) {
      // Maps iterate in insertion order: drop the oldest entry.
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    this.#entries.set(id, { stored, view: undefined, at: this.#now(), trusted, refreshAfter });
  }
}
