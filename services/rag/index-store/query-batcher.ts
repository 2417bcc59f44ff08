/**
 * For the query path in front of the store: concurrent query embeddings ride together. While one
 * inference runs, the queries that arrive wait and then go as one batch, so a burst of N queries
 * costs about one inference per batch instead of N in a row (the embedder runs one inference at a
 * time). An idle batcher adds no delay: the first query goes at once. Documents pass straight through.
 */

import type { Embedder, EmbeddingKind } from '../embedding/embedder.ts';

interface Waiting {
  readonly text: string;
  readonly resolve: (vector: Float32Array) => void;
  readonly reject: (error: unknown) => void;
}

export class QueryBatcher implements Embedder {
  readonly dimensions: number;
  readonly #inner: Embedder;
  readonly #maxBatch: number;
  readonly #waiting: Waiting[] = [];
  #running = false;

  /** `maxBatch`: queries per inference at most (default 16) */
  constructor(inner: Embedder, options: { maxBatch?: number } = {}) {
    const maxBatch = options.maxBatch ?? 16;
    if (!Number.isInteger(maxBatch) || maxBatch < 1) throw new RangeError(`maxBatch must be a positive integer, got ${maxBatch}`);
    this.#inner = inner;
    this.#maxBatch = maxBatch;
    this.dimensions = inner.dimensions;
  }

  embed(texts: readonly string[], kind: EmbeddingKind): Promise<Float32Array[]> {
    if (kind !== 'query') return this.#inner.embed(texts, kind);
    const vectors = Promise.all(
      texts.map((text) => new Promise<Float32Array>((resolve, reject) => this.#waiting.push({ text, resolve, reject }))),
    );
    void this.#drain();
    return vectors;
  }

  async #drain(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    try {
      while (this.#waiting.length > 0) {
        const batch = this.#waiting.splice(0, this.#maxBatch);
        try {
          const vectors = await this.#inner.embed(
            batch.map((w) => w.text),
            'query',
          );
          batch.forEach((w, i) => {
            const vector = vectors[i];
            if (vector) w.resolve(vector);
            else w.reject(new Error(`the embedder returned ${vectors.length} vectors for ${batch.length} queries`));
          });
        } catch (e) {
          for (const w of batch) w.reject(e);
        }
      }
    } finally {
      this.#running = false;
    }
  }
}
