import type { NameIndex } from '../name-index.ts';
import type { VectorMatrix } from '../vector-matrix.ts';
import type { MemoryBm25 } from '../memory-bm25.ts';

/**
 * A collection in memory: matrix row i is the chunk whose id is `ids[i]`, rows in (path, ordinal)
 * order; its names and its postings for the named and BM25 lists, numbered by the same rows.
 */
export interface CollectionSnapshot {
  readonly matrix: VectorMatrix;
  readonly ids: readonly number[];
  readonly names: NameIndex;
  readonly bm25: MemoryBm25;
}

/** What a process may hold of collections by default: 256 MB, vectors of about 170,000 chunks of 384 floats, fewer with their postings. */
export const DEFAULT_SNAPSHOT_BYTES = 256 * 1024 * 1024;

/**
 * Collections held in this process (vectors, names, postings), each as of one generation, least
 * recently used dropped first beyond a budget of bytes. An exact scan of a collection's vectors in memory costs
 * 0.2 ms for 2,000 chunks where PostgreSQL's HNSW scan, filtered to the collection, cost 5 ms of
 * the database's CPU (bench/rag.ts, 2026-11-28): a search whose transaction sees the generation a
 * snapshot was taken at reads the snapshot, so it ranks the very rows its other lists read.
 *
 * A collection whose vectors pass an eighth of the budget is never held: it is searched in the database.
 * Loads are bounded so that searches cannot be turned into reads of whole collections: one load at a
 * time in the process, and after a collection's load, none of it again for ten times as long as that
 * one took (at least `minReloadMs`): one collection's loads take at most a tenth of the time, however
 * often it changes or is pushed out by others, and across collections a single load runs at once.
 * Meanwhile searches go through the database.
 */
export class CollectionSnapshots {
  readonly budgetBytes: number;
  readonly #entries = new Map<string, { generation: number; snapshot: CollectionSnapshot; bytes: number }>();
  #bytes = 0;
  readonly minReloadMs: number;
  #loading: { collection: string; started: number } | undefined;
  /** When each collection may be loaded again (pruned of past entries when it grows). */
  readonly #nextLoad = new Map<string, number>();

  constructor(budgetBytes: number = DEFAULT_SNAPSHOT_BYTES, options: { minReloadMs?: number } = {}) {
    if (!Number.isFinite(budgetBytes) || budgetBytes < 0) throw new RangeError(`a snapshot budget in bytes, got ${budgetBytes}`);
    this.budgetBytes = budgetBytes;
    this.minReloadMs = options.minReloadMs ?? 2_000;
  }

  /**
   * Whether a load of `collection` may start now (then it has started: call `endLoad` when done,
   * whatever came of it): none other is running, and the collection's pause after its last is over.
   */
  startLoad(collection: string, now: number = Date.now()): boolean {
    if (this.#loading) return false;
    if (now < (this.#nextLoad.get(collection) ?? 0)) return false;
    this.#loading = { collection, started: now };
    return true;
  }

  /** The load started last is over: its collection waits ten times its duration, at least minReloadMs. */
  endLoad(now: number = Date.now()): void {
    const loading = this.#loading;
    if (!loading) return;
    this.#loading = undefined;
    if (this.#nextLoad.size >= 10_000) for (const [id, at] of this.#nextLoad) if (at <= now) this.#nextLoad.delete(id);
    this.#nextLoad.set(loading.collection, now + Math.max(this.minReloadMs, 10 * (now - loading.started)));
  }

  /** Whether a collection of `chunks` vectors of `dimensions` may be held. */
  fits(chunks: number, dimensions: number): boolean {
    // An eighth: loading also parses the collection's postings, a few times its vectors for a moment.
    return chunks * dimensions * 4 <= this.budgetBytes / 8;
  }

  /** The collection as of `generation`, if held; another generation's is dropped. */
  get(collection: string, generation: number): CollectionSnapshot | undefined {
    const entry = this.#entries.get(collection);
    if (!entry) return undefined;
    if (entry.generation !== generation) {
      this.drop(collection);
      return undefined;
    }
    this.#entries.delete(collection);
    this.#entries.set(collection, entry);
    return entry.snapshot;
  }

  set(collection: string, generation: number, snapshot: CollectionSnapshot): void {
    const { matrix } = snapshot;
    const bytes = matrix.rows * matrix.dimensions * 4 + snapshot.bm25.bytes;
    this.drop(collection);
    if (!this.fits(matrix.rows, matrix.dimensions)) return;
    this.#entries.set(collection, { generation, snapshot, bytes });
    this.#bytes += bytes;
    for (const [id, entry] of this.#entries) {
      if (this.#bytes <= this.budgetBytes) break;
      this.#entries.delete(id);
      this.#bytes -= entry.bytes;
    }
  }

  drop(collection: string): void {
    const entry = this.#entries.get(collection);
    if (!entry) return;
    this.#entries.delete(collection);
    this.#bytes -= entry.bytes;
  }

  /** Bytes held now. */
  get bytes(): number {
    return this.#bytes;
  }
}
