import type { AnyBulkWriteOperation, Collection, Db, Document, IndexDescription, IndexSpecification } from 'mongodb';
import type { EventHandler } from './consumer.ts';
import type { DeliveredEvent, Event, Position } from './envelope.ts';
import { appliedHere } from './applied-here.ts';
import { physicalName } from './collections.ts';
import { TransientError, isTransient } from './errors.ts';

/**
 * A read model over a context's event union E (a discriminated union on `type`): which events it
 * applies, the document each event belongs to, and a pure evolve that narrows by `type`, as an
 * Emmett projection does. The runner makes applying idempotent, so evolve never needs to think
 * about redelivery.
 *
 * The runner takes any projection (`Projection<D>`, that is over all events) and calls
 * documentId and evolve only with events whose type is in `handles`, which the codec decoded with
 * that type's schema: so a projection typed over its own union is sound where any projection is
 * expected. documentId and evolve are declared as methods for exactly that assignability.
 */
export interface Projection<D extends Document = Document, E extends Event = Event> {
  name: string;
  collection: string;
  handles: readonly E['type'][];
  /** Document the event belongs to; null when this event does not touch the projection. */
  documentId(event: E): string | null;
  /** New document, or null to delete it. Pure: no I/O, no clock. */
  evolve(document: D | null, event: E): D | null;
  indexes?: readonly IndexDescription[];
  /**
   * Documents are written once and never changed: evolve(existing, event) returns `existing` for
   * every event after the one that created it. The runner then inserts without reading first, and a
   * document already there (a redelivery, another event of the same id) keeps what it holds: one
   * write per event instead of a read and a write. Its bookkeeping (_v, _pos) is that of its first
   * event, whatever chunk later events for it arrive in (applyStored), so a replay matches.
   */
  writeOnce?: true;
  /**
   * Event types that create their document as a rule (an aggregate's first event). On the first
   * attempt the runner inserts the document such an event starts without reading it first: one
   * write instead of a read and a write, where an aggregate's first event meets several projections
   * at once (issue 37). A document there after all (a redelivery, an event that overtook
   * it, a tombstone) refuses the insert, and the chunk is applied again after reading, as any write
   * conflict is; the position guard then skips what the first attempt wrote.
   */
  createdBy?: readonly E['type'][];
}

/** Bookkeeping stored beside the projected fields. */
export interface Stored {
  _id: string;
  /** Number of events applied: increases by one per event, identical in a replay. */
  _v: number;
  /**
   * Per topic-partition: the last applied offset (the idempotency guard) and the ids of the last
   * events applied from it. The same event published twice (outbox relay, a publish that landed
   * after its timeout) sits at two offsets of one partition, so offsets alone would apply it twice;
   * keeping the ids per partition keeps them in log order, identical in a replay.
   */
  _pos: { topic: string; partition: number; offset: string; recent: string[] }[];
  _deleted?: true;
}

const RECENT_EVENT_IDS = 16;

export type StoredDocument<D> = D & Stored;

/** The entry of the event's partition in a document's positions (a handful at most). */
function positionOf(pos: Stored['_pos'], position: Position): Stored['_pos'][number] | undefined {
  for (const p of pos) if (p.partition === position.partition && p.topic === position.topic) return p;
  return undefined;
}

/**
 * a >= b for Kafka offsets written as decimal strings (non-negative, no leading zeros): by length,
 * then digit by digit. The hot path of every applied event; BigInt parsing cost more than the
 * rest of the guard.
 */
export function offsetAtOrAbove(a: string, b: string): boolean {
  return a.length !== b.length ? a.length > b.length : a >= b;
}

/** At or below the partition's applied offset: a redelivery. */
function belowPosition(doc: Stored | null, position: Position): boolean {
  const seen = doc ? positionOf(doc._pos, position) : undefined;
  return seen !== undefined && offsetAtOrAbove(seen.offset, position.offset);
}

/** Applied before at another offset: a re-publish. */
function republished(doc: Stored | null, event: DeliveredEvent): boolean {
  return (doc ? positionOf(doc._pos, event.position)?.recent.includes(event.metadata.eventId) : false) ?? false;
}

function withPosition(pos: Stored['_pos'], position: Position, eventId: string | null): Stored['_pos'] {
  const previous = positionOf(pos, position);
  let recent: string[];
  if (eventId === null) recent = previous?.recent ?? [];
  else if (!previous) recent = [eventId];
  else {
    // The last RECENT_EVENT_IDS ids, this one last.
    const from = Math.max(0, previous.recent.length + 1 - RECENT_EVENT_IDS);
    recent = previous.recent.slice(from);
    recent.push(eventId);
  }
  const entry = { topic: position.topic, partition: position.partition, offset: position.offset, recent };
  // The partition's entry replaced in place keeps the order; a new partition needs a sort.
  if (previous) return pos.map((p) => (p === previous ? entry : p));
  return [...pos, entry].sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1));
}

function strip<D>(stored: Stored & Document): D {
  const { _id, _v, _pos, _deleted, ...rest } = stored;
  return rest as D;
}

/** Thrown when another writer changed a document between our read and our write. */
export class WriteConflict extends TransientError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'WriteConflict';
  }
}

/**
 * One event applied to a stored document (null: none yet), with the redelivery and re-publish
 * guards: the document the database holds after the runner applies it. Pure, so an in-process
 * cache can follow the log exactly as the projection does. An event that changes nothing returns
 * `current` itself.
 */
export function applyStored<D extends Document>(
  projection: Projection<D>,
  id: string,
  current: StoredDocument<Document> | null,
  event: DeliveredEvent,
): StoredDocument<Document> | null {
  // Written once means left exactly as its first event made it, bookkeeping included: a later event
  // for it (a copy, a redelivery, another replica's refusal of the same minute) in the same chunk must
  // give what it gives in a later chunk, where the insert finds the document and leaves it. Otherwise
  // a live consumer and a replay, chunked differently, disagree on _v and _pos.
  if (current !== null && projection.writeOnce) return current;
  if (belowPosition(current, event.position)) return current;
  if (republished(current, event)) {
    // Skip it, but move the position past it so its own redelivery is skipped cheaply.
    return { ...current!, _pos: withPosition(current!._pos, event.position, null) };
  }
  const state = current && !current._deleted ? strip<D>(current) : null;
  const next = projection.evolve(state, event);
  // An event about a document that does not exist and is not created by it: nothing to keep.
  if (next === null && current === null) return null;
  const bookkeeping: Stored = {
    _id: id,
    _v: (current?._v ?? 0) + 1,
    _pos: withPosition(current?._pos ?? [], event.position, event.metadata.eventId),
  };
  // A deleted document stays as a tombstone so its positions still guard against redelivery.
  return next === null ? { ...bookkeeping, _deleted: true } : { ...next, ...bookkeeping };
}

/**
 * Applies a chunk of events to the projection's documents with one read and one bulk write.
 * Writes are guarded on _v, so a concurrent writer (a rebalance, a replay catching up, a service
 * applying its own event for read-your-writes) makes the chunk retry against fresh documents
 * instead of overwriting them; the position guard then skips what the other writer applied.
 */
export async function applyEvents<D extends Document>(
  collection: Collection<Document>,
  projection: Projection<D>,
  events: readonly DeliveredEvent[],
  attempts = 5,
  /**
   * Documents the caller read already (null: read and not there), e.g. while it published the
   * events, so the first attempt needs no read of its own: the write's guard on _v still refuses a
   * document changed since, and the retry reads it afresh.
   */
  read?: ReadonlyMap<string, StoredDocument<Document> | null>,
): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await applyOnce(collection, projection, events, attempt === 1 ? read : undefined, attempt === 1);
    } catch (err) {
      if (!(err instanceof WriteConflict) || attempt >= attempts) throw err;
    }
  }
}

async function applyOnce<D extends Document>(
  collection: Collection<Document>,
  projection: Projection<D>,
  events: readonly DeliveredEvent[],
  read?: ReadonlyMap<string, StoredDocument<Document> | null>,
  /** The first attempt: a document a createdBy event starts is taken to be new, not read. */
  first = false,
): Promise<number> {
  const handled = new Set(projection.handles);
  const byId = new Map<string, DeliveredEvent[]>();
  for (const e of events) {
    if (!handled.has(e.type)) continue;
    const id = projection.documentId(e);
    if (id === null) continue;
    const list = byId.get(id) ?? [];
    list.push(e);
    byId.set(id, list);
  }
  if (byId.size === 0) return 0;
  if (projection.writeOnce && !read) return insertOnce(collection, projection, byId);
  const namespace = collection.namespace;
  for (const [id, list] of byId) {
    const left = list.filter((e) => !appliedHere.has(namespace, id, e));
    if (left.length === 0) byId.delete(id);
    else if (left.length < list.length) byId.set(id, left);
  }
  if (byId.size === 0) return 0;

  const creators = first ? projection.createdBy : undefined;
  const unread = [...byId.keys()].filter((id) => !read?.has(id) && !creators?.includes(byId.get(id)![0]!.type));
  const existing = unread.length > 0 ? await findByIds(collection, unread) : new Map<string, StoredDocument<Document>>();
  for (const [id, doc] of read ?? []) if (doc && byId.has(id)) existing.set(id, doc);

  const ops: AnyBulkWriteOperation<Document>[] = [];
  /** Documents that hold their events once the writes below succeed. */
  const holding: string[] = [];
  let count = 0;
  for (const [id, list] of byId) {
    const before = existing.get(id) ?? null;
    let current = before;
    for (const event of list) {
      const next = applyStored(projection, id, current, event);
      if ((next?._v ?? 0) !== (current?._v ?? 0)) count++;
      current = next;
    }
    if (current !== null) holding.push(id);
    if (current === before || current === null) continue;
    ops.push(
      before
        ? { replaceOne: { filter: { _id: id, _v: before._v } as Document, replacement: current } }
        : { insertOne: { document: current as Document } },
    );
  }
  if (ops.length === 0) {
    noteHolding(namespace, holding, byId);
    return 0;
  }

  let expectedReplaced = 0;
  let matched = 0;
  try {
    for (let i = 0; i < ops.length; i += MAX_BULK_OPERATIONS) {
      const batch = ops.slice(i, i + MAX_BULK_OPERATIONS);
      const result = await collection.bulkWrite(batch, { ordered: false });
      expectedReplaced += batch.filter((o) => 'replaceOne' in o).length;
      matched += result.matchedCount;
    }
  } catch (err) {
    if (isDuplicateKey(err)) throw new WriteConflict(`${projection.name}: document created concurrently`, { cause: err });
    throw err;
  }
  // Batches already written stay written: the retry re-reads and the position guard skips them.
  if (matched !== expectedReplaced)
    throw new WriteConflict(`${projection.name}: ${expectedReplaced - matched} document(s) changed underneath`);
  noteHolding(namespace, holding, byId);
  return count;
}

function noteHolding(namespace: string, ids: readonly string[], byId: ReadonlyMap<string, readonly DeliveredEvent[]>): void {
  for (const id of ids) appliedHere.note(namespace, id, byId.get(id)!);
}

/**
 * Operations per bulk write. FerretDB 1.24 on PostgreSQL holds one pooled connection per statement
 * of an update command until the whole command ends: a command of more statements than its pool
 * has connections (50 by default) waits for itself forever, and the connections it holds are never
 * given back (a backlog of 51 documents to update hung the database server for good). Several
 * projections writing full batches at once add up, so the local stack gives FerretDB a pool of 150
 * (deploy/local/stack.ts). Well below those bounds, batches cost MongoDB nothing measurable.
 */
export const MAX_BULK_OPERATIONS = 32;

/** Lookups of one chunk's documents in flight at once. */
const LOOKUPS_IN_FLIGHT = 8;

/**
 * The stored documents with these ids, one `_id` equality lookup each, a few at a time. Not one
 * `$in` query: FerretDB 1.24 pushes equality down to its storage but not `$in`, which it answers by
 * reading and decoding the whole collection (measured at 2,000 documents: 285 ms for an `$in` of one
 * id, 3.9 ms for an equality lookup). MongoDB answers either from the `_id` index.
 */
async function findByIds(collection: Collection<Document>, ids: readonly string[]): Promise<Map<string, StoredDocument<Document>>> {
  const found = new Map<string, StoredDocument<Document>>();
  for (let i = 0; i < ids.length; i += LOOKUPS_IN_FLIGHT) {
    const docs = await Promise.all(
      ids.slice(i, i + LOOKUPS_IN_FLIGHT).map((id) => collection.findOne<StoredDocument<Document>>({ _id: id } as Document)),
    );
    for (const doc of docs) if (doc) found.set(String(doc._id), doc);
  }
  return found;
}

/**
 * A write-once projection's chunk: each document as its events make it from nothing, inserted;
 * one that exists already is left as it is (evolve would return it unchanged). The count is of
 * documents created.
 */
async function insertOnce<D extends Document>(
  collection: Collection<Document>,
  projection: Projection<D>,
  byId: ReadonlyMap<string, readonly DeliveredEvent[]>,
): Promise<number> {
  const docs: Document[] = [];
  for (const [id, list] of byId) {
    let current: StoredDocument<Document> | null = null;
    for (const event of list) current = applyStored(projection, id, current, event);
    if (current !== null) docs.push(current);
  }
  let created = 0;
  for (let i = 0; i < docs.length; i += MAX_BULK_OPERATIONS) {
    const batch = docs.slice(i, i + MAX_BULK_OPERATIONS);
    try {
      created += (await collection.insertMany(batch, { ordered: false })).insertedCount;
    } catch (err) {
      const failed = duplicatesOf(err, batch.length);
      if (!failed) throw err;
      // "Duplicate" may be of another unique index, where nothing was written: each must be there by _id.
      const there = await Promise.all(
        failed.map((i) => collection.findOne({ _id: batch[i]!._id } as Document, { projection: { _id: 1 } })),
      );
      if (there.some((doc) => doc === null)) throw err;
      created += batch.length - failed.length;
    }
  }
  return created;
}

/** The batch positions an unordered insert refused as duplicates; undefined when it failed otherwise. */
function duplicatesOf(err: unknown, batchLength: number): number[] | undefined {
  const e = err as { code?: number; writeErrors?: unknown } | null;
  const errors: { code?: number; index?: number }[] = Array.isArray(e?.writeErrors)
    ? (e.writeErrors as { code?: number; index?: number }[])
    : batchLength === 1 && e?.code === 11000
      ? [{ code: 11000, index: 0 }]
      : [];
  if (errors.length === 0 || errors.some((w) => w.code !== 11000 || typeof w.index !== 'number')) return undefined;
  return errors.map((w) => w.index!);
}

function isDuplicateKey(err: unknown): boolean {
  const e = err as { code?: number; writeErrors?: { code?: number }[] } | null;
  return e?.code === 11000 || (Array.isArray(e?.writeErrors) && e.writeErrors.some((w) => w.code === 11000));
}

/**
 * The handler a consumer runner drives. Without an explicit collection it writes wherever the
 * projection's logical name points now (it follows a replay's swap).
 *
 * While it writes a collection nobody else writes (a replay's shadow before the swap), it can keep
 * the documents in memory instead (`bufferWrites`): see ExclusiveWrites.
 */
export class ProjectionApplier<D extends Document> implements EventHandler {
  private readonly db: Db;
  private physical: string | undefined;
  readonly projection: Projection<D>;
  applied = 0;
  private buffer: ExclusiveWrites<D> | undefined;
  /** handle and endBuffering one at a time: the runner calls handle from its own loop. */
  private turn: Promise<unknown> = Promise.resolve();

  constructor(db: Db, projection: Projection<D>, physical?: string) {
    this.db = db;
    this.projection = projection;
    this.physical = physical;
  }

  /** A physical collection to write to, or undefined to follow the logical name. */
  retarget(physical: string | undefined): void {
    this.physical = physical;
  }

  /**
   * From now on, apply events in memory and write each document once (when `maxDocuments` are
   * held, and at endBuffering) to the current physical collection, which no other writer may touch
   * until endBuffering has returned.
   */
  bufferWrites(options: { maxDocuments?: number } = {}): void {
    if (!this.physical) throw new Error('bufferWrites needs an explicit collection nobody else writes');
    this.buffer = new ExclusiveWrites(
      this.db.collection(this.physical),
      this.projection,
      options.maxDocuments ?? DEFAULT_BUFFERED_DOCUMENTS,
    );
  }

  /**
   * Writes every buffered document and goes back to guarded writes; after it returns, the
   * collection holds everything applied so far. Returns how many documents (tombstones included)
   * the buffered writes left in the collection, counted without a scan (a count on FerretDB reads
   * the whole collection). A write that fails for good fails this call.
   */
  async endBuffering(): Promise<number> {
    let documents = 0;
    await this.inTurn(async () => {
      const buffer = this.buffer;
      if (!buffer) return;
      await buffer.flush();
      documents = buffer.documents;
      this.buffer = undefined;
    });
    return documents;
  }

  /** Why buffered writes failed for good, if they did; the runner only sees a transient error. */
  get failure(): Error | undefined {
    return this.buffer?.failure;
  }

  async handle(events: readonly DeliveredEvent[]): Promise<void> {
    await this.inTurn(async () => {
      if (this.buffer) {
        this.applied += await this.buffer.apply(events);
        // Counted before writing: if the write fails, the runner hands the same events again and
        // the position guard skips them in memory.
        await this.buffer.writeIfFull();
        return;
      }
      const name = this.physical ?? (await physicalName(this.db, this.projection.collection));
      // An event this process is applying itself (a service's read-your-writes) is waited for and
      // then skipped unread, instead of raced (AppliedHere).
      await appliedHere.settled(this.projection.collection, events);
      this.applied += await applyEvents(this.db.collection(name), this.projection, events);
    });
  }

  private inTurn(fn: () => Promise<void>): Promise<void> {
    const run = this.turn.then(fn);
    this.turn = run.catch(() => undefined);
    return run;
  }
}

/** Documents a buffering applier holds before it writes and evicts some (about 1.5 kB each). */
export const DEFAULT_BUFFERED_DOCUMENTS = 100_000;

/** Documents per insert command, and insert commands in flight at once, when buffered writes are flushed. */
const INSERT_BATCH = 500;
const INSERTS_IN_FLIGHT = 4;

interface Buffered {
  stored: StoredDocument<Document> | null;
  /**
   * The _v the collection holds for it: null when it holds nothing, -1 when unknown (an insert
   * that failed may or may not have landed).
   */
  writtenV: number | null;
  dirty: boolean;
}

/**
 * A projection applied in memory over a collection only this writer touches (a replay's shadow):
 * the same applyStored step as the guarded path, so the same documents and the same position
 * guard (a redelivered or re-published event is skipped exactly as in the database), but no read
 * before each chunk and one write per document instead of one per document per chunk. On FerretDB,
 * where every `_id` lookup and guarded replace scans the collection, that is the difference between
 * a rebuild of tens of events per second and one at the speed of the log.
 *
 * Documents are inserted when first written; one written and evicted before (more than
 * `maxDocuments` in memory) is read back when an event touches it again and replaced guarded on its
 * `_v` as usual. Nothing here is visible to readers until the collection is swapped in, and the
 * swap waits for the final flush, so a failed rebuild never shows a half-written projection.
 */
class ExclusiveWrites<D extends Document> {
  private readonly collection: Collection<Document>;
  private readonly projection: Projection<D>;
  private readonly handled: ReadonlySet<string>;
  private readonly maxDocuments: number;
  private readonly docs = new Map<string, Buffered>();
  /** Ids the collection holds a document for; with `docs`, what exists without asking the database. */
  private readonly written = new Set<string>();
  failure: Error | undefined;

  constructor(collection: Collection<Document>, projection: Projection<D>, maxDocuments: number) {
    this.collection = collection;
    this.projection = projection;
    this.handled = new Set(projection.handles);
    this.maxDocuments = Math.max(1, maxDocuments);
  }

  /** Documents in the collection once flushed: every one this writer created. */
  get documents(): number {
    let n = this.written.size;
    for (const [id, entry] of this.docs) if (entry.stored !== null && !this.written.has(id)) n++;
    return n;
  }

  /** Applies a chunk in memory; returns how many events changed a document. */
  async apply(events: readonly DeliveredEvent[]): Promise<number> {
    const ids: (string | null)[] = new Array(events.length);
    let missing: Set<string> | undefined;
    for (let i = 0; i < events.length; i++) {
      const e = events[i]!;
      const id = this.handled.has(e.type) ? this.projection.documentId(e) : null;
      ids[i] = id;
      if (id !== null && this.written.has(id) && !this.docs.has(id)) (missing ??= new Set()).add(id);
    }
    if (missing) {
      // Written and evicted before: read back (the collection is ours, so what we wrote is there).
      const found = await this.guard(() => findByIds(this.collection, [...missing]));
      for (const id of missing) {
        const stored = found.get(id) ?? null;
        this.docs.set(id, { stored, writtenV: stored ? stored._v : null, dirty: false });
      }
    }
    let count = 0;
    for (let i = 0; i < events.length; i++) {
      const id = ids[i];
      if (id == null) continue;
      let entry = this.docs.get(id);
      const current = entry?.stored ?? null;
      const next = applyStored(this.projection, id, current, events[i]!);
      if (next === current) continue;
      if ((next?._v ?? 0) !== (current?._v ?? 0)) count++;
      if (!entry) {
        entry = { stored: next, writtenV: null, dirty: true };
        this.docs.set(id, entry);
      } else {
        entry.stored = next;
        entry.dirty = true;
      }
    }
    return count;
  }

  /** Past maxDocuments in memory: writes what changed and forgets the older half. */
  async writeIfFull(): Promise<void> {
    if (this.docs.size <= this.maxDocuments) return;
    await this.flush();
    this.evict(this.docs.size - Math.floor(this.maxDocuments / 2));
  }

  /** Writes every changed document. */
  async flush(): Promise<void> {
    const inserts: Document[] = [];
    const replaces: { id: string; entry: Buffered }[] = [];
    for (const [id, entry] of this.docs) {
      if (!entry.dirty || entry.stored === null) continue;
      if (entry.writtenV === null) inserts.push(entry.stored);
      else replaces.push({ id, entry });
    }
    await this.guard(async () => {
      await this.insert(inserts);
      await this.replace(replaces);
    });
  }

  private async insert(docs: readonly Document[]): Promise<void> {
    const batches: Document[][] = [];
    for (let i = 0; i < docs.length; i += INSERT_BATCH) batches.push(docs.slice(i, i + INSERT_BATCH));
    const insertBatch = async (batch: Document[]) => {
      try {
        await this.collection.insertMany(batch, { ordered: true });
      } catch (err) {
        // Some of the batch may have landed: write those documents by _id from now on.
        for (const doc of batch) this.docs.get(String(doc._id))!.writtenV = -1;
        throw err;
      }
      for (const doc of batch) this.wrote(String(doc._id), doc as StoredDocument<Document>);
    };
    for (let i = 0; i < batches.length; i += INSERTS_IN_FLIGHT) {
      const results = await Promise.allSettled(batches.slice(i, i + INSERTS_IN_FLIGHT).map(insertBatch));
      const failed = results.find((r) => r.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
    }
  }

  private async replace(items: readonly { id: string; entry: Buffered }[]): Promise<void> {
    for (let i = 0; i < items.length; i += MAX_BULK_OPERATIONS) {
      const batch = items.slice(i, i + MAX_BULK_OPERATIONS);
      const ops = batch.map(({ id, entry }) =>
        entry.writtenV === -1
          ? { replaceOne: { filter: { _id: id } as Document, replacement: entry.stored!, upsert: true } }
          : { replaceOne: { filter: { _id: id, _v: entry.writtenV } as Document, replacement: entry.stored! } },
      );
      const result = await this.collection.bulkWrite(ops, { ordered: false });
      // Each guarded replace matches its document; each unguarded one matches or inserts it.
      if (result.matchedCount + result.upsertedCount !== batch.length) {
        throw new Error(`${this.projection.name}: another writer changed a collection that was to be written by this replay alone`);
      }
      for (const { id, entry } of batch) this.wrote(id, entry.stored!);
    }
  }

  private wrote(id: string, stored: StoredDocument<Document>): void {
    const entry = this.docs.get(id)!;
    // Applied again while the write was in flight: still dirty, now against the written _v.
    entry.dirty = entry.stored !== stored;
    entry.writtenV = stored._v;
    this.written.add(id);
  }

  /** Drops the oldest clean documents from memory (Map order is first-touch order). */
  private evict(count: number): void {
    for (const [id, entry] of this.docs) {
      if (count <= 0) break;
      if (entry.dirty) continue;
      this.docs.delete(id);
      count--;
    }
  }

  /**
   * A write or read that fails for a reason that will not pass is remembered as `failure` (the
   * replay gives up on it) and reported to the runner as transient, so the events in hand wait
   * instead of going to the dead-letter topic: they are not what failed.
   */
  private async guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (!isTransient(err)) this.failure ??= err instanceof Error ? err : new Error(String(err));
      throw new TransientError(`buffered projection writes failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
  }
}

export async function ensureIndexes(db: Db, projection: Projection, collectionName = projection.collection): Promise<void> {
  await createIndexesOneByOne(db.collection(collectionName), projection.indexes ?? []);
}

/**
 * One createIndex per index, never one createIndexes naming several: FerretDB 1.24 drops indexes
 * that already exist from its to-do list by their position in the original list, so a call naming
 * two existing indexes panics ("slice bounds out of range") and drops the connection, which is
 * how a second `svc start` on the same data used to die. One at a time, each existing index is
 * simply a no-op, on FerretDB and MongoDB alike.
 */
export async function createIndexesOneByOne<T extends Document>(
  collection: Collection<T>,
  indexes: readonly IndexDescription[],
): Promise<void> {
  for (const { key, ...options } of indexes) await collection.createIndex(key as IndexSpecification, options);
}

/** The document as stored, bookkeeping included (tombstones too): what a following cache starts from. */
export async function findStored(collection: Collection<Document>, filter: Document): Promise<StoredDocument<Document> | null> {
  return (await collection.findOne(filter)) as StoredDocument<Document> | null;
}

/** A projection's stored document by id (bookkeeping included), wherever its logical name points now. */
export async function findStoredById(
  db: Db,
  projection: Pick<Projection, 'collection'>,
  id: string,
): Promise<StoredDocument<Document> | null> {
  return findStored(db.collection(await physicalName(db, projection.collection)), { _id: id });
}

/**
 * Whether this process applied the event to the projection's document itself (AppliedHere), waiting
 * first while it is applying it: a reader that must see the event applied before it acts (a
 * notification about the document) then needs no read of its own. False says nothing: the reader
 * looks for itself.
 */
export async function appliedHereTo(
  db: Db,
  projection: Pick<Projection, 'collection'>,
  id: string,
  event: DeliveredEvent,
): Promise<boolean> {
  await appliedHere.settled(projection.collection, [event]);
  return appliedHere.has(`${db.databaseName}.${await physicalName(db, projection.collection)}`, id, event);
}

/** A projection's stored documents with these ids (those that exist), in one query. */
export async function findStoredByIds(
  db: Db,
  projection: Pick<Projection, 'collection'>,
  ids: readonly string[],
): Promise<StoredDocument<Document>[]> {
  const collection = db.collection<StoredDocument<Document>>(await physicalName(db, projection.collection));
  const filter: Document = { _id: { $in: [...ids] } };
  return collection.find(filter).toArray();
}

/** The projected fields of a stored document; a tombstone reads as absent. */
export function projectedFields<D>(stored: StoredDocument<Document> | null): D | null {
  return stored && !stored._deleted ? strip<D>(stored) : null;
}

/** Reads one document of a projection, without the bookkeeping fields; tombstones read as absent. */
export async function findProjected<D>(collection: Collection<Document>, id: string): Promise<D | null> {
  // No document can hold a NUL in its id (PostgreSQL text cannot), and FerretDB fails the lookup instead
  // of finding nothing: an id a caller made up with one is simply not there.
  if (id.includes('\u0000')) return null;
  const doc = (await collection.findOne({ _id: id, _deleted: { $ne: true } } as Document)) as (Stored & Document) | null;
  return doc ? strip<D>(doc) : null;
}

export const projectionGroupId = (projection: Pick<Projection, 'name'>): string => `projection.${projection.name}`;
