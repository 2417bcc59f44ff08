import { createHash } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import type { FileRef } from './events.ts';

/**
 * Files a client pushed for a collection (what a hosted service needs: an IDE or CI sends its
 * files). They are the collection's sources as much as a project folder is: the index is derived
 * from them and can be rebuilt from them. One document per collection and path, `_id` unique.
 */
interface PushedDocument {
  _id: string;
  collectionId: string;
  /** Whose bytes these are (per-customer bound); absent on files pushed before it was kept. */
  customerId?: string;
  path: string;
  hash: string;
  size: number;
  content: string;
  pushedAt: Date;
}

export const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** The collection id is hex, so the first ':' ends it; no NUL separator (PostgreSQL's JSON cannot hold one). */
const sourceId = (collectionId: string, path: string): string => `${collectionId}:${path}`;

export class PushedSources {
  readonly #collection: Collection<PushedDocument>;

  constructor(db: Db) {
    this.#collection = db.collection<PushedDocument>('rag_sources');
  }

  async ensureIndexes(): Promise<void> {
    await this.#collection.createIndex({ collectionId: 1 });
    await this.#collection.createIndex({ customerId: 1 });
    await this.#collection.createIndex({ pushedAt: 1 });
  }

  /** Bytes of pushed sources a customer keeps now. */
  async bytesOf(customerId: string): Promise<number> {
    const [sum] = await this.#collection
      .aggregate<{ bytes: number }>([{ $match: { customerId } }, { $group: { _id: null, bytes: { $sum: '$size' } } }])
      .toArray();
    return sum?.bytes ?? 0;
  }

  /**
   * Retention: pushed files not pushed again since `before` are deleted (a sweep, not a TTL index,
   * which the design keeps out of the core path). Their collection drops them at its next full index.
   */
  async sweep(before: Date): Promise<number> {
    return (await this.#collection.deleteMany({ pushedAt: { $lt: before } })).deletedCount;
  }

  /** Stores the files (a newer push of a path replaces it) and returns what an index request names. */
  async put(collectionId: string, files: readonly { path: string; content: string }[], customerId?: string): Promise<FileRef[]> {
    const refs: FileRef[] = [];
    const pushedAt = new Date();
    for (const f of files) {
      const ref = { path: f.path, hash: sha256(f.content), size: Buffer.byteLength(f.content, 'utf8') };
      await this.#collection.replaceOne(
        { _id: sourceId(collectionId, f.path) },
        { collectionId, ...(customerId ? { customerId } : {}), path: f.path, hash: ref.hash, size: ref.size, content: f.content, pushedAt },
        { upsert: true },
      );
      refs.push(ref);
    }
    return refs;
  }

  async get(collectionId: string, path: string): Promise<{ path: string; hash: string; content: string } | null> {
    const doc = await this.#collection.findOne({ _id: sourceId(collectionId, path) });
    return doc ? { path: doc.path, hash: doc.hash, content: doc.content } : null;
  }

  /** Every pushed file of a collection, for a rebuild. */
  async *all(collectionId: string): AsyncIterable<{ path: string; hash: string; content: string }> {
    for await (const doc of this.#collection.find({ collectionId })) yield { path: doc.path, hash: doc.hash, content: doc.content };
  }

  /** A page of a collection's pushed files under `prefix`, by path from the last down, below `before`. */
  async pageDown(
    collectionId: string,
    prefix: string,
    before: string | null,
    limit: number,
  ): Promise<Array<{ path: string; hash: string; content: string }>> {
    const below = before === null ? {} : { $lt: before };
    const docs = await this.#collection
      .find({ collectionId, path: { $gte: prefix, $lt: `${prefix}\uffff`, ...below } })
      .sort({ path: -1 })
      .limit(limit)
      .toArray();
    return docs.map((doc) => ({ path: doc.path, hash: doc.hash, content: doc.content }));
  }

  /** Forgets every file pushed for a collection (it was deleted). */
  async removeCollection(collectionId: string): Promise<number> {
    return (await this.#collection.deleteMany({ collectionId })).deletedCount;
  }

  async paths(collectionId: string): Promise<Set<string>> {
    const docs = await this.#collection.find({ collectionId }, { projection: { path: 1 } }).toArray();
    return new Set(docs.map((d) => d.path));
  }
}
