import { BM25_WEIGHTS } from './bm25-terms.ts';
import { TopK } from './top-k.ts';

/** One term's postings: the rows (snapshot order) holding it and how often, per column. */
export interface TermPostings {
  readonly rows: ArrayLike<number>;
  readonly inSymbol: ArrayLike<number>;
  readonly inPath: ArrayLike<number>;
  readonly inBody: ArrayLike<number>;
}

/**
 * Every term's postings in four shared arrays: term `t`'s entries are `[offsets[slot], offsets[slot + 1])`
 * with `slot = slots.get(t)`. Four arrays per term would cost more in array headers than in postings
 * (about 100 bytes each, against 16 bytes an entry; 25,000 terms for a 2,400-chunk package).
 */
export interface PackedPostings {
  readonly slots: ReadonlyMap<string, number>;
  /** slots + 1 entries, ascending */
  readonly offsets: Int32Array;
  readonly rows: Int32Array;
  readonly inSymbol: Int32Array;
  readonly inPath: Int32Array;
  readonly inBody: Int32Array;
}

/** Packs per-term postings (as the database gives them: plain arrays, copied once) into shared arrays. */
export function packPostings(postings: ReadonlyMap<string, TermPostings>): PackedPostings {
  let total = 0;
  for (const p of postings.values()) total += p.rows.length;
  const slots = new Map<string, number>();
  const offsets = new Int32Array(postings.size + 1);
  const [rows, inSymbol, inPath, inBody] = [new Int32Array(total), new Int32Array(total), new Int32Array(total), new Int32Array(total)];
  let at = 0;
  for (const [term, p] of postings) {
    offsets[slots.size] = at;
    slots.set(term, slots.size);
    rows.set(p.rows, at);
    inSymbol.set(p.inSymbol, at);
    inPath.set(p.inPath, at);
    inBody.set(p.inBody, at);
    at += p.rows.length;
  }
  offsets[slots.size] = at;
  return { slots, offsets, rows, inSymbol, inPath, inBody };
}

/**
 * pg-bm25.ts's ranking over a collection's postings held in memory: the same formula, the same
 * float64 operations in the same order (each phrase's contribution added in query order), so a
 * snapshot's list is the database's. Scores agree to the last bit or one short of it: V8's
 * Math.log and the database's log() may round a logarithm differently. Rows are numbered in
 * (path, ordinal) order, so ties go to the lower row, as `ORDER BY score DESC, path, ordinal` does.
 */
export class MemoryBm25 {
  readonly #postings: PackedPostings;
  /** per row: the chunk's term count in all columns (BM25's document length) */
  readonly #lengths: Int32Array;
  readonly #n: number;
  readonly #avgdl: number;

  constructor(postings: PackedPostings, lengths: Int32Array, chunkCount: number, tokenCount: number) {
    this.#postings = postings;
    this.#lengths = lengths;
    this.#n = chunkCount;
    this.#avgdl = tokenCount / Math.max(chunkCount, 1);
  }

  /** Bytes this holds, about: for the snapshots' budget. */
  get bytes(): number {
    const p = this.#postings;
    // The four postings arrays, and per term its text, its map entry and its offset.
    let bytes = this.#lengths.byteLength + p.rows.byteLength * 4;
    for (const term of p.slots.keys()) bytes += term.length * 2 + 52;
    return bytes;
  }

  /** The best `k` rows for the query's phrases (bm25QueryTerms), best first. */
  search(phrases: readonly string[], k: number): Array<{ row: number; score: number }> {
    if (phrases.length === 0 || k <= 0) return [];
    const scores = new Map<number, number>();
    const { symbol, path, body } = BM25_WEIGHTS;
    const p = this.#postings;
    for (const phrase of phrases) {
      const slot = p.slots.get(phrase);
      if (slot === undefined) continue;
      const from = p.offsets[slot] as number;
      const to = p.offsets[slot + 1] as number;
      const hits = to - from;
      const x = Math.log((this.#n - hits + 0.5) / (hits + 0.5));
      const idf = x <= 0 ? 1e-6 : x;
      for (let i = from; i < to; i++) {
        const row = p.rows[i] as number;
        const f = symbol * (p.inSymbol[i] as number) + path * (p.inPath[i] as number) + body * (p.inBody[i] as number);
        const add = idf * ((f * (1.2 + 1.0)) / (f + 1.2 * (1 - 0.75 + (0.75 * (this.#lengths[row] as number)) / this.#avgdl)));
        const sum = scores.get(row);
        scores.set(row, sum === undefined ? add : sum + add);
      }
    }
    const top = new TopK(Math.min(Math.floor(k), scores.size));
    for (const [row, score] of scores) if (top.wouldTake(score, row)) top.push(score, row);
    return top.sorted().map(({ index, score }) => ({ row: index, score }));
  }
}
