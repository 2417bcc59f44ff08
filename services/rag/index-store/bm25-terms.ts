/**
 * The search terms of a chunk as the SQLite store's FTS5 table sees them, counted per column, so
 * BM25 can be computed outside FTS5 with the statistics its bm25() reads: by PostgreSQL's
 * statements, and in memory by either engine (memory-bm25.ts). The SQLite store writes `termsOf(symbol)`,
 * `pathTerms(path)` and `termsOf(content)` joined by spaces into a `unicode61 tokenchars '_-'`
 * table; every term is already lowercase letters, digits, `_` and `-`, so each is one FTS5 token,
 * and the only change the tokenizer makes is removing diacritics (its default `remove_diacritics 1`:
 * a Latin letter with one diacritic loses it, `é` -> `e`). `ftsToken` does the same here.
 */

import { pathTerms, termsOf } from '../chunking/identifiers.ts';
import { queryTerms } from './fts-query.ts';

/**
 * BM25 column weights (symbol, path, body). A chunk's own name and its file's name say what it is
 * about; a term in the body may be a passing mention. (3/1.5/1, 1/1/1 and 5/2/1 scored within one
 * question of each other on bench/rag.ts: the reason decides.)
 */
export const BM25_WEIGHTS = { symbol: 3, path: 1.5, body: 1 } as const;

/** A Latin letter followed by exactly one combining mark (after NFD). */
const LATIN_WITH_ONE_MARK = /(\p{Script=Latin})(\p{Mn})(?!\p{Mn})/gu;

/** A term as FTS5's unicode61 tokenizer (remove_diacritics 1) stores it. */
export function ftsToken(term: string): string {
  if (/^[ -~]*$/.test(term)) return term; // ASCII: nothing to fold
  return term.normalize('NFD').replace(LATIN_WITH_ONE_MARK, '$1').normalize('NFC');
}

export interface TermCounts {
  readonly symbol: number;
  readonly path: number;
  readonly body: number;
}

export interface ChunkTerms {
  /** term -> occurrences in each of the three columns */
  readonly counts: ReadonlyMap<string, TermCounts>;
  /** tokens in all three columns: FTS5's document size */
  readonly length: number;
}

/** A chunk's terms in FTS5's three columns (symbol, path, body), as the SQLite store writes them. */
export type TermColumns = readonly [symbol: readonly string[], path: readonly string[], body: readonly string[]];

export function termColumns(chunk: { symbol?: string | undefined; content: string }, path: string): TermColumns {
  return [termsOf(chunk.symbol ?? ''), pathTerms(path), termsOf(chunk.content)];
}

export function chunkTerms(chunk: { symbol?: string | undefined; content: string }, path: string): ChunkTerms {
  return countTerms(termColumns(chunk, path));
}

/** Each term's occurrences per column, folded as FTS5 folds them. */
export function countTerms(columns: TermColumns): ChunkTerms {
  const counts = new Map<string, { symbol: number; path: number; body: number }>();
  const names = ['symbol', 'path', 'body'] as const;
  let length = 0;
  columns.forEach((terms, column) => {
    const name = names[column] as (typeof names)[number];
    for (const raw of terms) {
      const term = ftsToken(raw);
      let entry = counts.get(term);
      if (!entry) {
        entry = { symbol: 0, path: 0, body: 0 };
        counts.set(term, entry);
      }
      entry[name]++;
      length++;
    }
  });
  return { counts, length };
}

/**
 * The phrases of the FTS5 query the SQLite store runs for `query`, in order: one single-token
 * phrase per query term (a repeat after folding stays a repeat, as FTS5 scores it twice).
 */
export function bm25QueryTerms(query: string): string[] {
  return queryTerms(query).map(ftsToken);
}
