/**
 * Every chunk vector of a store in one contiguous Float32Array, rows in the store's canonical order
 * (path, ordinal), so an exact nearest-neighbour query is one pass of dot products over memory: at
 * 384 dimensions, 20 000 chunks are 30 MB and about 8 M multiply-adds, 2 ms in WebAssembly SIMD
 * (simd-dot.ts; 7 ms in the JavaScript fallback). Exact search needs no index to maintain or tune
 * and loses no recall; `bench/rag.ts` measures it.
 */

import { createDotKernel } from './simd-dot.ts';
import type { DotKernel } from './simd-dot.ts';
import { TopK } from './top-k.ts';

export class VectorMatrix {
  readonly dimensions: number;
  readonly rows: number;
  /** row-major, `rows * dimensions` */
  readonly data: Float32Array;
  /** per row: the chunk's row id, path and ordinal */
  readonly rowIds: Int32Array;
  readonly paths: readonly string[];
  readonly ordinals: Int32Array;
  readonly #kernel: DotKernel | undefined;

  /** `data` is copied (into WebAssembly memory when SIMD is available); `this.data` is the copy. */
  constructor(dimensions: number, data: Float32Array, rowIds: Int32Array, paths: readonly string[], ordinals: Int32Array) {
    if (data.length !== rowIds.length * dimensions || paths.length !== rowIds.length || ordinals.length !== rowIds.length) {
      throw new RangeError('vector matrix: rows, ids, paths and ordinals disagree');
    }
    this.dimensions = dimensions;
    this.rows = rowIds.length;
    this.#kernel = createDotKernel(this.rows, dimensions);
    if (this.#kernel) this.#kernel.data.set(data);
    this.data = this.#kernel?.data ?? data;
    this.rowIds = rowIds;
    this.paths = paths;
    this.ordinals = ordinals;
  }

  /** Rows by dot product with `query` (cosine for unit vectors), best first; ties to the earlier row. */
  nearest(query: Float32Array, k: number): Array<{ row: number; score: number }> {
    if (query.length !== this.dimensions) throw new RangeError(`query has ${query.length} dimensions, the index ${this.dimensions}`);
    const top = new TopK(Math.min(k, this.rows));
    if (this.#kernel) {
      this.#kernel.query.set(query);
      this.#kernel.run();
      const scores = this.#kernel.scores;
      for (let row = 0; row < this.rows; row++) {
        const score = scores[row] as number;
        if (top.wouldTake(score, row)) top.push(score, row);
      }
      return top.sorted().map(({ index, score }) => ({ row: index, score }));
    }
    const d = this.dimensions;
    const data = this.data;
    const tail = d - (d % 4);
    for (let row = 0, offset = 0; row < this.rows; row++, offset += d) {
      // Four accumulators: independent additions the CPU can overlap.
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      let j = 0;
      for (; j < tail; j += 4) {
        s0 += (query[j] as number) * (data[offset + j] as number);
        s1 += (query[j + 1] as number) * (data[offset + j + 1] as number);
        s2 += (query[j + 2] as number) * (data[offset + j + 2] as number);
        s3 += (query[j + 3] as number) * (data[offset + j + 3] as number);
      }
      for (; j < d; j++) s0 += (query[j] as number) * (data[offset + j] as number);
      const score = s0 + s1 + s2 + s3;
      if (top.wouldTake(score, row)) top.push(score, row);
    }
    return top.sorted().map(({ index, score }) => ({ row: index, score }));
  }
}
