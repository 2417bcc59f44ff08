import type { KindWeights } from './file-priors.ts';
import type { Chunk, ChunkKind } from '../chunking/chunk.ts';

/**
 * What made the vectors. `name` should change with anything that changes them: the model, and how
 * the indexer turns a chunk into the text it embeds (`embeddingIdentity` in indexing does both).
 */
export interface ModelIdentity {
  readonly name: string;
  readonly dimensions: number;
}

export interface FileRecord {
  readonly path: string;
  /** sha256 hex of the file's text */
  readonly hash: string;
  /** UTF-8 bytes */
  readonly size: number;
  readonly chunks: number;
  /** ms since the epoch */
  readonly indexedAt: number;
}

/** A chunk as the indexer writes it: the chunker's output plus its unit vector. */
export interface ChunkRecord extends Chunk {
  readonly vector: Float32Array;
}

/**
 * A stored chunk's vector with what its embedding text was made from (the file's path aside): a
 * changed file's chunks that come out the same are given these instead of being embedded again.
 */
export interface StoredVector {
  readonly kind: ChunkKind;
  readonly symbol?: string;
  readonly content: string;
  readonly vector: Float32Array;
}

/** One entry of a single ranked list (BM25 or vectors); `score` is larger for better. */
export interface RankedChunk {
  /** the chunk's row id (valid while its file is not rewritten) */
  readonly rowId: number;
  readonly path: string;
  readonly ordinal: number;
  readonly score: number;
}

export interface HitMetadata {
  readonly file: string;
  /** the chunk kind */
  readonly type: ChunkKind;
  readonly startLine: number;
  readonly endLine: number;
  readonly language: string;
  readonly symbol?: string;
}

export interface SearchHit {
  /** `path#ordinal`: stable while the file is unchanged */
  readonly id: string;
  readonly content: string;
  /** fused score (RRF), larger is better; only comparable within one answer */
  readonly score: number;
  readonly metadata: HitMetadata;
}

export interface SearchOptions {
  /** entries taken from each list before fusion (default 50) */
  readonly candidates?: number;
  /** the RRF constant (default 60) */
  readonly rrfK?: number;
  /** weight of the BM25 list when the query has code in it or names a chunk (default 1) */
  readonly bm25Weight?: number;
  /** weight of the BM25 list for a plain-text query (default `PLAIN_TEXT_BM25_WEIGHT`, 0.4) */
  readonly plainTextBm25Weight?: number;
  /** weight of the vector list (default 1) */
  readonly vectorWeight?: number;
  /** weight of the list of chunks the query names (default 1) */
  readonly namedWeight?: number;
  /** multipliers by file kind (default `KIND_WEIGHTS`, file-priors.ts); all 1 turns the priors off */
  readonly kindWeights?: KindWeights;
  /** score share of each further near-copy file (default `NEAR_COPY_DECAY`); 1 turns it off */
  readonly nearCopyDecay?: number;
}
