import { BM25_WEIGHTS } from '../store.ts';
import { TopK } from '../top-k.ts';

/** One term's postings: the rows (snapshot order) holding it and how often, per column. */
export interface TermPostings {
  readonly rows: Int32Array;
  readonly inSymbol: Int32Array;
  readonly inPath: Int32Array;
  readonly inBody: Int32Array;
}

/**
 * pg-bm25.ts's ranking over a collection's postings held in memory: the same formula, the same
 * float64 operations in the same order (each phrase's contribution added in query order), so a
 * snapshot's list is the database's. Scores agree to the last bit or one short of it: V8's
 * Math.log and the database's log() may round a logarithm differently. Rows are numbered in
 * (path, ordinal) order, so ties go to the lower row, as `ORDER BY score DESC, path, ordinal` does.
 */
export class MemoryBm25 {
  readonly #postings: ReadonlyMap<string, TermPostings>;
  /** per row: the chunk's term count in all columns (BM25's document length) */
  readonly #lengths: Int32Array;
  readonly #n: number;
  readonly #avgdl: number;

  constructor(postings: ReadonlyMap<string, TermPostings>, lengths: Int32Array, chunkCount: number, tokenCount: number) {
    this.#postings = postings;
    this.#lengths = lengths;
    this.#n = chunkCount;
    this.#avgdl = tokenCount / Math.max(chunkCount, 1);
  }

  /** Bytes this holds, about: for the snapshots' budget. */
  get bytes(): number {
    let bytes = this.#lengths.byteLength;
    for (const [term, p] of this.#postings) bytes += term.length * 2 + 64 + p.rows.byteLength * 4;
    return bytes;
  }

  /** The best `k` rows for the query's phrases (bm25QueryTerms), best first. */
  search(phrases: readonly string[], k: number): Array<{ row: number; score: number }> {
    if (phrases.length === 0 || k <= 0) return [];
    const scores = new Map<number, number>();
    const { symbol, path, body } = BM25_WEIGHTS;
    for (const phrase of phrases) {
      const p = this.#postings.get(phrase);
      if (!p) continue;
      const hits = p.rows.length;
      const x = Math.log((this.#n - hits + 0.5) / (hits + 0.5));
      const idf = x <= 0 ? 1e-6 : x;
      for (let i = 0; i < hits; i++) {
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
