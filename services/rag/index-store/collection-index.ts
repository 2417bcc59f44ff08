import type { ChunkRecord, FileRecord, HitMetadata, ModelIdentity, RankedChunk, SearchHit, SearchOptions, StoredVector } from './types.ts';

/**
 * One collection's index as the indexer, name lookups and queries use it, whichever engine holds it:
 * a SQLite file of this process (`sqlite-indexes.ts`) or tables in a PostgreSQL database every
 * replica shares (`pg-indexes.ts`). Async because the shared one is a network away.
 */
export interface CollectionIndex {
  readonly model: ModelIdentity;
  /** Changes with every committed write, from any process that writes this index. */
  generation(): Promise<number>;
  manifest(): Promise<FileRecord[]>;
  fileHash(path: string): Promise<string | undefined>;
  counts(): Promise<{ files: number; chunks: number }>;
  fileChunks(path: string): Promise<Array<HitMetadata & { content: string; ordinal: number }>>;
  /** One file's chunks with their vectors, in order: what re-indexing the file can reuse. */
  fileVectors(path: string): Promise<StoredVector[]>;
  writeFile(file: { path: string; hash: string; size: number }, chunks: readonly ChunkRecord[]): Promise<void>;
  removeFiles(paths: readonly string[]): Promise<number>;
  searchBm25(query: string, k: number): Promise<RankedChunk[]>;
  /** Nearest by cosine: exact in SQLite, through the HNSW index in PostgreSQL (bench/rag.ts scores it alone). */
  searchVector(queryVector: Float32Array, k: number): Promise<RankedChunk[]>;
  searchNamed(query: string, k: number): Promise<RankedChunk[]>;
  search(query: string, queryVector: Float32Array, k: number, options?: SearchOptions): Promise<SearchHit[]>;
  hits(ranked: ReadonlyArray<Pick<RankedChunk, 'rowId' | 'score'>>): Promise<SearchHit[]>;
}

/** The indexes of every collection, as one process reaches them. */
export interface CollectionIndexes {
  /** Opens (creating when missing) a collection's index; one made by another model or schema is started again. */
  open(collectionId: string, model: ModelIdentity): Promise<CollectionIndex>;
  /** Keeps a collection's index open while it is written (`by` 1 to pin, -1 to release). */
  pin(collectionId: string, by: 1 | -1): void;
  drop(collectionId: string): Promise<void>;
  close(): Promise<void>;
  /**
   * The stores outside the process these indexes need, as readiness checks (a shared database); none
   * for files of the process's own.
   */
  readinessChecks(): Record<string, () => Promise<void>>;
}
