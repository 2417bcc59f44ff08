/**
 * The chunks' names in memory, for finding the chunks a query names (query-profile.ts) without a
 * full-text scan: a name lookup is a few map reads, where the FTS5 route looked at hundreds of
 * symbol matches per query (common words are parts of many names).
 */

import { splitIdentifier } from '../chunking/identifiers.ts';

interface Segment {
  readonly whole: string;
  readonly parts: readonly string[];
}

export class NameIndex {
  /** per row, the segments of its symbol with two or more words */
  readonly #segments: ReadonlyArray<readonly Segment[]>;
  /** per row, its symbol's last segment when that has two or more words (the chunk's own name) */
  readonly #last: ReadonlyArray<Segment | undefined>;
  /** per row, how many segments its symbol has */
  readonly #segmentCounts: Int32Array;
  /** whole name of a row's last segment -> rows */
  readonly #byWhole = new Map<string, number[]>();
  /** first word of a row's last segment -> rows */
  readonly #byFirstWord = new Map<string, number[]>();

  /** `symbols[row]`: the symbol of each row, in the order the caller numbers rows */
  constructor(symbols: ReadonlyArray<string | undefined>) {
    const segments: Segment[][] = [];
    const lasts: Array<Segment | undefined> = [];
    this.#segmentCounts = new Int32Array(symbols.length);
    symbols.forEach((symbol, row) => {
      const raw = splitSegments(symbol ?? '');
      this.#segmentCounts[row] = raw.length;
      const named = raw.map(segmentOf);
      segments.push(named.filter((s): s is Segment => s !== undefined));
      const last = named.at(-1);
      lasts.push(last);
      if (last) {
        push(this.#byWhole, last.whole, row);
        push(this.#byFirstWord, last.parts[0] as string, row);
      }
    });
    this.#segments = segments;
    this.#last = lasts;
  }

  /**
   * Rows the query terms name (their last segment whole, or all its words), most named segments
   * first, then those named by the identifier itself rather than by its words (`tagSetReducer`
   * over `read preference`), then those with fewer segments left unnamed, then by row.
   */
  named(queryTerms: ReadonlySet<string>, k: number): Array<{ row: number; segments: number }> {
    const candidates = new Set<number>();
    for (const term of queryTerms) {
      for (const row of this.#byWhole.get(term) ?? []) candidates.add(row);
      for (const row of this.#byFirstWord.get(term) ?? []) candidates.add(row);
    }
    const isNamed = (s: Segment) => queryTerms.has(s.whole) || s.parts.every((p) => queryTerms.has(p));
    const found: Array<{ row: number; segments: number; wholes: number; unnamed: number }> = [];
    for (const row of candidates) {
      const last = this.#last[row];
      if (!last || !isNamed(last)) continue;
      const named = (this.#segments[row] ?? []).filter(isNamed);
      const wholes = named.filter((s) => queryTerms.has(s.whole)).length;
      found.push({ row, segments: named.length, wholes, unnamed: (this.#segmentCounts[row] as number) - named.length });
    }
    found.sort((a, b) => b.segments - a.segments || b.wholes - a.wholes || a.unnamed - b.unnamed || a.row - b.row);
    return found.slice(0, Math.max(0, k)).map(({ row, segments }) => ({ row, segments }));
  }

}

/**
 * `ConnectionPool.checkOut` -> [`ConnectionPool`, `checkOut`]; `Install > Linux Setup` (a heading
 * path) -> [`Install`, `Linux Setup`], whose words name it as an identifier's do.
 */
export function splitSegments(symbol: string): string[] {
  return symbol
    .split(/[.>#/:]+/)
    .map((s) => s.trim())
    .filter((s) => /[\p{L}\p{N}]/u.test(s));
}

/** A segment of two words or more; single words (`Server`, `compress`) are English as often as names. */
function segmentOf(segment: string): Segment | undefined {
  const parts = splitIdentifier(segment);
  if (parts.length < 2) return undefined;
  return { whole: segment.replaceAll(/[\s$]+/g, '').replace(/^_+|_+$/g, '').toLowerCase(), parts };
}

function push(map: Map<string, number[]>, key: string, row: number): void {
  const rows = map.get(key);
  if (rows) rows.push(row);
  else map.set(key, [row]);
}
