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

/** A chunk's symbol, parsed once (the parse is what costs: a snapshot patch reuses it). */
export interface SymbolName {
  /** its segments of two or more words */
  readonly segments: readonly Segment[];
  /** its last segment when that has two or more words: the chunk's own name */
  readonly last: Segment | undefined;
  /** how many segments it has, one-word ones included */
  readonly segmentCount: number;
}

const NO_NAME: SymbolName = Object.freeze({ segments: [], last: undefined, segmentCount: 0 });

export function parseSymbol(symbol: string | undefined): SymbolName {
  if (!symbol) return NO_NAME;
  const raw = splitSegments(symbol);
  const named = raw.map(segmentOf);
  return { segments: named.filter((s): s is Segment => s !== undefined), last: named.at(-1), segmentCount: raw.length };
}

export class NameIndex {
  readonly #rows: readonly SymbolName[];
  /** whole name of a row's last segment -> rows */
  readonly #byWhole = new Map<string, number[]>();
  /** first word of a row's last segment -> rows */
  readonly #byFirstWord = new Map<string, number[]>();

  /** `names[row]`: the parsed symbol of each row, in the order the caller numbers rows */
  constructor(names: readonly SymbolName[]) {
    this.#rows = names;
    names.forEach((name, row) => {
      if (!name.last) return;
      push(this.#byWhole, name.last.whole, row);
      push(this.#byFirstWord, name.last.parts[0] as string, row);
    });
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
      const name = this.#rows[row] ?? NO_NAME;
      if (!name.last || !isNamed(name.last)) continue;
      const named = name.segments.filter(isNamed);
      const wholes = named.filter((s) => queryTerms.has(s.whole)).length;
      found.push({ row, segments: named.length, wholes, unnamed: name.segmentCount - named.length });
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
  return {
    whole: segment
      .replaceAll(/[\s$]+/g, '')
      .replace(/^_+|_+$/g, '')
      .toLowerCase(),
    parts,
  };
}

function push(map: Map<string, number[]>, key: string, row: number): void {
  const rows = map.get(key);
  if (rows) rows.push(row);
  else map.set(key, [row]);
}
