import type { VectorMatrix } from '../vector-matrix.ts';

/** A collection's vectors in memory: matrix row i is the chunk whose id is `ids[i]`, rows in (path, ordinal) order. */
export interface VectorSnapshot {
  readonly matrix: VectorMatrix;
  readonly ids: readonly number[];
}

/** What a process may hold of collections' vectors by default: 256 MB, about 170,000 chunks of 384 floats. */
export const DEFAULT_SNAPSHOT_BYTES = 256 * 1024 * 1024;

/**
 * Collections' vectors held in this process, each as of one generation, least recently used
 * dropped first beyond a budget of bytes. An exact scan of a collection's vectors in memory costs
 * 0.2 ms for 2,000 chunks where PostgreSQL's HNSW scan, filtered to the collection, cost 5 ms of
 * the database's CPU (bench/rag.ts, 2026-11-28): a search whose transaction sees the generation a
 * snapshot was taken at reads the snapshot, so it ranks the very rows its other lists read.
 *
 * A collection larger than a quarter of the budget is never held: it is searched through the index.
 * Loads are bounded so that searches cannot be turned into reads of whole collections: one load at a
 * time in the process, and a collection loaded at most once per `reloadMs` (a customer cycling
 * through many collections, or one written to continually, is searched through the index meanwhile).
 */
export class VectorSnapshots {
  readonly budgetBytes: number;
  readonly reloadMs: number;
  #loading = false;
  /** When each collection's last load started (pruned of entries older than reloadMs). */
  readonly #loadedAt = new Map<string, number>();
  readonly #entries = new Map<string, { generation: number; snapshot: VectorSnapshot; bytes: number }>();
  #bytes = 0;

  constructor(budgetBytes: number = DEFAULT_SNAPSHOT_BYTES, options: { reloadMs?: number } = {}) {
    if (!Number.isFinite(budgetBytes) || budgetBytes < 0) throw new RangeError(`a snapshot budget in bytes, got ${budgetBytes}`);
    this.budgetBytes = budgetBytes;
    this.reloadMs = options.reloadMs ?? 30_000;
  }

  /**
   * Whether a load of `collection` may start now (then it has started: call `endLoad` when done,
   * whatever came of it): none other is running, and the collection's last began `reloadMs` ago or more.
   */
  startLoad(collection: string, now: number = Date.now()): boolean {
    if (this.#loading) return false;
    const last = this.#loadedAt.get(collection);
    if (last !== undefined && now - last < this.reloadMs) return false;
    if (this.#loadedAt.size >= 10_000) {
      for (const [id, at] of this.#loadedAt) if (now - at >= this.reloadMs) this.#loadedAt.delete(id);
    }
    this.#loadedAt.set(collection, now);
    this.#loading = true;
    return true;
  }

  endLoad(): void {
    this.#loading = false;
  }

  /** Whether a collection of `chunks` vectors of `dimensions` may be held. */
  fits(chunks: number, dimensions: number): boolean {
    return chunks * dimensions * 4 <= this.budgetBytes / 4;
  }

  /** The collection's vectors as of `generation`, if held; another generation's are dropped. */
  get(collection: string, generation: number): VectorSnapshot | undefined {
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

  set(collection: string, generation: number, snapshot: VectorSnapshot): void {
    const { matrix } = snapshot;
    const bytes = matrix.rows * matrix.dimensions * 4;
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
