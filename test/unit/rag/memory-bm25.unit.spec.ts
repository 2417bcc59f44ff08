import { expect } from 'chai';
import { MemoryBm25, packPostings, type TermPostings } from '../../../services/rag/index-store/memory-bm25.ts';

const postings = (entries: Array<[row: number, symbol: number, path: number, body: number]>): TermPostings => ({
  rows: Int32Array.from(entries, (e) => e[0]),
  inSymbol: Int32Array.from(entries, (e) => e[1]),
  inPath: Int32Array.from(entries, (e) => e[2]),
  inBody: Int32Array.from(entries, (e) => e[3]),
});

describe("rag MemoryBm25: the PostgreSQL engine's BM25 over postings held in memory (unit)", () => {
  // Four chunks of 10, 20, 10 and 40 terms: 80 in all.
  const lengths = Int32Array.from([10, 20, 10, 40]);
  const index = new MemoryBm25(
    packPostings(
      new Map([
        [
          'retry',
          postings([
            [0, 1, 0, 2],
            [1, 0, 0, 1],
          ]),
        ],
        ['backoff', postings([[1, 0, 1, 0]])],
        [
          'every',
          postings([
            [0, 0, 0, 1],
            [1, 0, 0, 1],
            [2, 0, 0, 1],
            [3, 0, 0, 1],
          ]),
        ],
      ]),
    ),
    lengths,
    4,
    80,
  );

  /** FTS5's formula, written out for one phrase of one chunk. */
  const term = (hits: number, f: number, length: number) => {
    const x = Math.log((4 - hits + 0.5) / (hits + 0.5));
    const idf = x <= 0 ? 1e-6 : x;
    return idf * ((f * 2.2) / (f + 1.2 * (0.25 + (0.75 * length) / 20)));
  };

  it('scores each chunk as the sum, in query order, of its phrases, with column weights 3 / 1.5 / 1', () => {
    const hits = index.search(['retry', 'backoff'], 10);
    expect(hits.map((h) => h.row)).to.deep.equal([1, 0]);
    expect(hits[0]?.score).to.equal(term(2, 1, 20) + term(1, 1.5, 20));
    expect(hits[1]?.score).to.equal(term(2, 3 + 2, 10));
  });

  it('gives a term in every chunk the floor idf, and ties to the lower row', () => {
    const hits = index.search(['every'], 10);
    // Rows 0 and 2 are alike (same length, one occurrence): the lower row first.
    expect(hits.map((h) => h.row)).to.deep.equal([0, 2, 1, 3]);
    expect(hits[0]?.score).to.equal(1e-6 * (2.2 / (1 + 1.2 * (0.25 + (0.75 * 10) / 20))));
  });

  it('returns the best k, nothing for unknown terms or k of 0, and counts a repeated phrase twice', () => {
    expect(index.search(['retry', 'every'], 1).map((h) => h.row)).to.deep.equal([0]);
    expect(index.search(['nowhere'], 5)).to.deep.equal([]);
    expect(index.search(['retry'], 0)).to.deep.equal([]);
    expect(index.search([], 5)).to.deep.equal([]);
    const once = index.search(['backoff'], 1)[0]?.score as number;
    expect(index.search(['backoff', 'backoff'], 1)[0]?.score).to.equal(once + once);
  });
});
