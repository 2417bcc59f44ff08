import type { AnyBulkWriteOperation, Collection, Db, Document, IndexDescription, IndexSpecification } from 'mongodb';
import type { EventHandler } from './consumer.ts';
import type { DeliveredEvent, Event, Position } from './envelope.ts';
import { physicalName } from './collections.ts';
import { TransientError } from './errors.ts';

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

const samePartition = (p: Position) => (q: Pick<Position, 'topic' | 'partition'>) => q.topic === p.topic && q.partition === p.partition;

/** At or below the partition's applied offset: a redelivery. */
function belowPosition(doc: Stored | null, position: Position): boolean {
  const seen = doc?._pos.find(samePartition(position));
  return seen !== undefined && BigInt(seen.offset) >= BigInt(position.offset);
}

/** Applied before at another offset: a re-publish. */
function republished(doc: Stored | null, event: DeliveredEvent): boolean {
  return doc?._pos.find(samePartition(event.position))?.recent.includes(event.metadata.eventId) ?? false;
}

function withPosition(pos: Stored['_pos'], position: Position, eventId: string | null): Stored['_pos'] {
  const previous = pos.find(samePartition(position));
  const recent = eventId === null ? (previous?.recent ?? []) : [...(previous?.recent ?? []), eventId].slice(-RECENT_EVENT_IDS);
  const rest = pos.filter((p) => !samePartition(position)(p));
  return [...rest, { topic: position.topic, partition: position.partition, offset: position.offset, recent }].sort((a, b) =>
    a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1,
  );
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
): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await applyOnce(collection, projection, events);
    } catch (err) {
      if (!(err instanceof WriteConflict) || attempt >= attempts) throw err;
    }
  }
}

async function applyOnce<D extends Document>(
  collection: Collection<Document>,
  projection: Projection<D>,
  events: readonly DeliveredEvent[],
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

  const existing = await findByIds(collection, [...byId.keys()]);

  const ops: AnyBulkWriteOperation<Document>[] = [];
  let count = 0;
  for (const [id, list] of byId) {
    const before = existing.get(id) ?? null;
    let current = before;
    for (const event of list) {
      const next = applyStored(projection, id, current, event);
      if ((next?._v ?? 0) !== (current?._v ?? 0)) count++;
      current = next;
    }
    if (current === before || current === null) continue;
    ops.push(
      before
        ? { replaceOne: { filter: { _id: id, _v: before._v } as Document, replacement: current } }
        : { insertOne: { document: current as Document } },
    );
  }
  if (ops.length === 0) return 0;

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
  if (matched !== expectedReplaced) throw new WriteConflict(`${projection.name}: ${expectedReplaced - matched} document(s) changed underneath`);
  return count;
}

/**
 * Operations per bulk write. FerretDB 1.24 on PostgreSQL holds one pooled connection per statement
 * of an update command until the whole command ends: a command of more statements than its pool
 * has connections (50) waits for itself forever, and the connections it holds are never given back
 * (a backlog of 51 documents to update hung the database server for good). Well below that bound,
 * batches cost MongoDB nothing measurable.
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
    const docs = await Promise.all(ids.slice(i, i + LOOKUPS_IN_FLIGHT).map((id) => collection.findOne<StoredDocument<Document>>({ _id: id } as Document)));
    for (const doc of docs) if (doc) found.set(String(doc._id), doc);
  }
  return found;
}

function isDuplicateKey(err: unknown): boolean {
  const e = err as { code?: number; writeErrors?: { code?: number }[] } | null;
  return e?.code === 11000 || (Array.isArray(e?.writeErrors) && e.writeErrors.some((w) => w.code === 11000));
}

/**
 * The handler a consumer runner drives. Without an explicit collection it writes wherever the
 * projection's logical name points now (it follows a replay's swap).
 */
export class ProjectionApplier<D extends Document> implements EventHandler {
  private readonly db: Db;
  private physical: string | undefined;
  readonly projection: Projection<D>;
  applied = 0;

  constructor(db: Db, projection: Projection<D>, physical?: string) {
    this.db = db;
    this.projection = projection;
    this.physical = physical;
  }

  /** A physical collection to write to, or undefined to follow the logical name. */
  retarget(physical: string | undefined): void {
    this.physical = physical;
  }

  async handle(events: readonly DeliveredEvent[]): Promise<void> {
    const name = this.physical ?? (await physicalName(this.db, this.projection.collection));
    this.applied += await applyEvents(this.db.collection(name), this.projection, events);
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
export async function createIndexesOneByOne(collection: Collection<Document>, indexes: readonly IndexDescription[]): Promise<void> {
  for (const { key, ...options } of indexes) await collection.createIndex(key as IndexSpecification, options);
}

/** The document as stored, bookkeeping included (tombstones too): what a following cache starts from. */
export async function findStored(collection: Collection<Document>, filter: Document): Promise<StoredDocument<Document> | null> {
  return (await collection.findOne(filter)) as StoredDocument<Document> | null;
}

/** A projection's stored document by id (bookkeeping included), wherever its logical name points now. */
export async function findStoredById(db: Db, projection: Pick<Projection, 'collection'>, id: string): Promise<StoredDocument<Document> | null> {
  return findStored(db.collection(await physicalName(db, projection.collection)), { _id: id });
}

/** The projected fields of a stored document; a tombstone reads as absent. */
export function projectedFields<D>(stored: StoredDocument<Document> | null): D | null {
  return stored && !stored._deleted ? strip<D>(stored) : null;
}

/** Reads one document of a projection, without the bookkeeping fields; tombstones read as absent. */
export async function findProjected<D>(collection: Collection<Document>, id: string): Promise<D | null> {
  const doc = (await collection.findOne({ _id: id, _deleted: { $ne: true } } as Document)) as (Stored & Document) | null;
  return doc ? strip<D>(doc) : null;
}

export const projectionGroupId = (projection: Pick<Projection, 'name'>): string => `projection.${projection.name}`;
