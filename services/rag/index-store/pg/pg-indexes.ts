import pg from 'pg';
import type { Logger } from '../../../platform/logger.ts';
import type { CollectionIndex, CollectionIndexes } from '../collection-index.ts';
import { CollectionGoneError, ModelMismatchError } from '../errors.ts';
import type { ModelIdentity } from '../types.ts';
import { PgIndexStore } from './pg-store.ts';
import { CollectionSnapshots } from './collection-snapshots.ts';

/** Collections whose opened handle (no connection, a few fields) a process keeps. */
const HANDLES = 10_000;

/**
 * Every collection's index in one PostgreSQL database that every replica of rag, mcp and the indexer
 * shares, through one pool per process. Opening costs round trips (schema check, the collection's
 * row), so a handle is kept per collection; a handle whose collection another replica dropped is
 * opened again on its next use.
 */
export class PgIndexes implements CollectionIndexes {
  readonly #pool: pg.Pool;
  readonly #log: Logger;
  readonly #schema: { schema?: string };
  readonly #handles = new Map<string, Promise<PgIndexStore>>();
  /** Collections (vectors, names, postings) held in this process for searches (collection-snapshots.ts). */
  readonly #snapshots: CollectionSnapshots;

  /**
   * `schema`: the PostgreSQL schema of the tables (default `rag`; tests use their own).
   * `snapshotBytes`: memory for collections' vectors searched here (default 256 MB; 0: none, every
   * search through the database's HNSW index).
   */
  constructor(options: { url: string; poolSize: number; log: Logger; schema?: string; snapshotBytes?: number }) {
    this.#log = options.log;
    this.#snapshots = new CollectionSnapshots(options.snapshotBytes);
    this.#schema = options.schema ? { schema: options.schema } : {};
    this.#pool = new pg.Pool({ connectionString: options.url, max: options.poolSize });
    // An idle client's error (the server restarted) would otherwise be thrown out of the process.
    this.#pool.on('error', (err) => this.#log.warn({ err }, 'rag index database: an idle connection failed'));
  }

  async open(collectionId: string, model: ModelIdentity): Promise<CollectionIndex> {
    const handle = () => this.#handle(collectionId, model);
    await handle();
    return reopening(model, handle, () => this.#handles.delete(collectionId));
  }

  /** Writes are serialized per collection by the database (a lock on its row), across replicas: nothing to hold here. */
  pin(): void {}

  async drop(collectionId: string): Promise<void> {
    this.#handles.delete(collectionId);
    this.#snapshots.drop(collectionId);
    await PgIndexStore.drop(this.#pool, collectionId, this.#schema);
  }

  async close(): Promise<void> {
    this.#handles.clear();
    await this.#pool.end();
  }

  /** Readiness: every query and index job needs the shared database (a pooled connection answers). */
  readinessChecks(): Record<string, () => Promise<void>> {
    return {
      postgres: async () => {
        await this.#pool.query('SELECT 1');
      },
    };
  }

  #handle(collectionId: string, model: ModelIdentity): Promise<PgIndexStore> {
    const known = this.#handles.get(collectionId);
    if (known) return known;
    const opening = this.#open(collectionId, model);
    this.#handles.set(collectionId, opening);
    opening.catch(() => this.#handles.delete(collectionId));
    if (this.#handles.size > HANDLES) this.#handles.delete(this.#handles.keys().next().value as string);
    return opening;
  }

  async #open(collectionId: string, model: ModelIdentity): Promise<PgIndexStore> {
    try {
      return await PgIndexStore.open(this.#pool, { collection: collectionId, model, ...this.#schema, snapshots: this.#snapshots });
    } catch (err) {
      // Made by another model: derived data, so it is rebuilt from the sources (as a SQLite file is).
      if (!(err instanceof ModelMismatchError)) throw err;
      this.#log.warn({ collectionId, err: err.message }, 'index made by another model: starting it again');
      await PgIndexStore.drop(this.#pool, collectionId, this.#schema);
      return PgIndexStore.open(this.#pool, { collection: collectionId, model, ...this.#schema, snapshots: this.#snapshots });
    }
  }
}

/** A collection's index whose calls open it again, once, when another replica dropped it meanwhile. */
function reopening(model: ModelIdentity, handle: () => Promise<PgIndexStore>, forget: () => void): CollectionIndex {
  const call = async <T>(work: (store: PgIndexStore) => Promise<T>): Promise<T> => {
    try {
      return await work(await handle());
    } catch (err) {
      if (!(err instanceof CollectionGoneError)) throw err;
      forget();
      return work(await handle());
    }
  };
  return {
    model,
    generation: () => call((s) => s.generation()),
    manifest: () => call((s) => s.manifest()),
    fileHash: (path) => call((s) => s.fileHash(path)),
    counts: () => call((s) => s.counts()),
    fileChunks: (path) => call((s) => s.fileChunks(path)),
    fileVectors: (path) => call((s) => s.fileVectors(path)),
    writeFile: (file, chunks) => call((s) => s.writeFile(file, chunks)),
    removeFiles: (paths) => call((s) => s.removeFiles(paths)),
    searchBm25: (query, k) => call((s) => s.searchBm25(query, k)),
    searchVector: (vector, k) => call((s) => s.searchVector(vector, k)),
    searchNamed: (query, k) => call((s) => s.searchNamed(query, k)),
    search: (query, vector, k, options) => call((s) => s.search(query, vector, k, options)),
    hits: (ranked) => call((s) => s.hits(ranked)),
  };
}
