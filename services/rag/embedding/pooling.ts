/**
 * From a model's per-token output to one vector per text. Rows are right-padded, so a text's real
 * tokens are the first `lengths[b]` positions of row b (its attention mask).
 */

export type Pooling = 'mean' | 'cls' | 'none';

export interface TokenStates {
  /** [batch, sequence, dimensions] row-major, or [batch, dimensions] for pooling "none". */
  readonly data: Float32Array;
  readonly dims: readonly number[];
}

export function pool(states: TokenStates, lengths: readonly number[], pooling: Pooling): Float32Array[] {
  const [batch, second, third] = states.dims;
  if (pooling === 'none') {
    if (states.dims.length !== 2 || batch !== lengths.length || second === undefined) {
      throw new Error(`pooling "none" needs an output of shape [batch, dimensions], got [${states.dims.join(', ')}]`);
    }
    return lengths.map((_, b) => states.data.slice(b * second, (b + 1) * second));
  }
  if (states.dims.length !== 3 || batch !== lengths.length || second === undefined || third === undefined) {
    throw new Error(`pooling "${pooling}" needs an output of shape [batch, sequence, dimensions], got [${states.dims.join(', ')}]`);
  }
  const seq = second;
  const dim = third;
  return lengths.map((length, b) => {
    const row = b * seq * dim;
    if (pooling === 'cls') return states.data.slice(row, row + dim);
    const out = new Float32Array(dim);
    const n = Math.min(length, seq);
    for (let t = 0; t < n; t++) {
      const base = row + t * dim;
      for (let d = 0; d < dim; d++) out[d] = (out[d] ?? 0) + (states.data[base + d] ?? 0);
    }
    // sentence-transformers clamps the token count at 1e-9, so an empty mask gives zeros, not NaN.
    const count = Math.max(n, 1e-9);
    for (let d = 0; d < dim; d++) out[d] = (out[d] ?? 0) / count;
    return out;
  });
}

/** In place; a zero vector stays zero (sentence-transformers clamps the norm at 1e-12). */
export function l2Normalize(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const v of vector) sum += v * v;
  const norm = Math.max(Math.sqrt(sum), 1e-12);
  for (let d = 0; d < vector.length; d++) vector[d] = (vector[d] ?? 0) / norm;
  return vector;
}

export function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new Error(`vectors of different lengths (${a.length}, ${b.length})`);
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let d = 0; d < a.length; d++) {
    const x = a[d] ?? 0;
    const y = b[d] ?? 0;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return dot / Math.max(Math.sqrt(na) * Math.sqrt(nb), 1e-12);
}
