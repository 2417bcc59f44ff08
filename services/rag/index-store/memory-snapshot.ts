/**
 * What a query needs in memory (the vectors and the names), for one generation of the store, and
 * how it follows writes without reading everything again: reloading all vectors from SQLite costs
 * about 10 µs a chunk (0.2 s at 20 000 chunks), which every query after every write would pay while
 * an indexing run goes on; patching copies memory instead (a few ms), once for all the writes since
 * the last query.
 *
 * Rows stay in the store's canonical order, (path, ordinal) with paths compared as SQLite's BINARY
 * collation does (UTF-8 bytes, i.e. code points), so a patched snapshot is the one a fresh load gives.
 */

import type { ChunkTerms } from './bm25-terms.ts';
import type { MemoryBm25 } from './memory-bm25.ts';
import { NameIndex, parseSymbol } from './name-index.ts';
import type { SymbolName } from './name-index.ts';
import { compacted, encodeTerms, memoryBm25Of, type RowTerms, TermDictionary } from './snapshot-terms.ts';
import { VectorMatrix } from './vector-matrix.ts';

export interface SnapshotRow {
  readonly rowId: number;
  readonly ordinal: number;
  readonly symbol: string | undefined;
  readonly vector: Float32Array;
  /** the chunk's search terms; needed only when the snapshot being patched holds terms */
  readonly terms?: ChunkTerms;
}

interface HeldTerms {
  /** row i's terms */
  readonly rows: readonly RowTerms[];
  readonly dictionary: TermDictionary;
}

export class MemorySnapshot {
  readonly generation: number;
  readonly matrix: VectorMatrix;
  readonly names: NameIndex;
  readonly #symbols: readonly SymbolName[];
  /** Each row's search terms: loaded after the first BM25 search of a snapshot without them, then patched along. */
  #terms: HeldTerms | undefined;
  #bm25: { bm25: MemoryBm25; terms: number } | undefined;

  /** `symbols[row]`: each row's symbol, as text (a fresh load) or already parsed (a patch) */
  constructor(generation: number, matrix: VectorMatrix, symbols: ReadonlyArray<string | undefined | SymbolName>, terms?: HeldTerms) {
    this.generation = generation;
    this.matrix = matrix;
    this.#symbols = symbols.map((s) => (typeof s === 'object' ? s : parseSymbol(s)));
    this.names = new NameIndex(this.#symbols);
    this.#terms = terms;
  }

  /** Whether rows written after this snapshot must bring their terms to patch it. */
  get holdsTerms(): boolean {
    return this.#terms !== undefined;
  }

  /** Gives a snapshot that holds no terms every row's (row i's at i); later patches carry them. */
  holdTerms(all: readonly ChunkTerms[]): void {
    if (this.#terms) return;
    if (all.length !== this.matrix.rows) throw new Error(`terms for ${all.length} rows, the snapshot has ${this.matrix.rows}`);
    const dictionary = new TermDictionary();
    this.#terms = { rows: all.map((t) => encodeTerms(t, dictionary)), dictionary };
  }

  /** BM25 over this snapshot's rows in memory; undefined while it holds no terms. */
  bm25(): MemoryBm25 | undefined {
    if (!this.#terms) return undefined;
    this.#bm25 ??= memoryBm25Of(this.#terms.rows, this.#terms.dictionary);
    return this.#bm25.bm25;
  }

  /**
   * The snapshot after `changes` (path -> the file's rows now, in ordinal order; empty when the
   * file is gone), at `generation`.
   */
  patched(changes: ReadonlyMap<string, readonly SnapshotRow[]>, generation: number): MemorySnapshot {
    const old = this.matrix;
    const d = old.dimensions;
    const incoming = [...changes.entries()]
      .sort(([a], [b]) => comparePaths(a, b))
      .flatMap(([path, rows]) => rows.map((row) => ({ path, row })));
    let kept = 0;
    for (let i = 0; i < old.rows; i++) if (!changes.has(old.paths[i] as string)) kept++;
    const total = kept + incoming.length;
    const data = new Float32Array(total * d);
    const rowIds = new Int32Array(total);
    const ordinals = new Int32Array(total);
    const paths: string[] = [];
    const symbols: Array<SymbolName | string | undefined> = [];
    // Terms follow only while every incoming row brings its own; otherwise the next BM25 search loads them.
    const held = this.#terms && incoming.every(({ row }) => row.terms !== undefined) ? this.#terms : undefined;
    const terms: RowTerms[] = [];
    let i = 0;
    let j = 0;
    for (let k = 0; k < total; k++) {
      while (i < old.rows && changes.has(old.paths[i] as string)) i++;
      const next = incoming[j];
      const takeOld =
        i < old.rows &&
        (next === undefined ||
          comparePaths(old.paths[i] as string, next.path) < 0 ||
          (old.paths[i] === next.path && (old.ordinals[i] as number) < next.row.ordinal));
      if (takeOld) {
        data.set(old.data.subarray(i * d, (i + 1) * d), k * d);
        rowIds[k] = old.rowIds[i] as number;
        ordinals[k] = old.ordinals[i] as number;
        paths.push(old.paths[i] as string);
        symbols.push(this.#symbols[i]);
        if (held) terms.push(held.rows[i] as RowTerms);
        i++;
      } else if (next) {
        data.set(next.row.vector, k * d);
        rowIds[k] = next.row.rowId;
        ordinals[k] = next.row.ordinal;
        paths.push(next.path);
        symbols.push(next.row.symbol);
        if (held) terms.push(encodeTerms(next.row.terms as ChunkTerms, held.dictionary));
        j++;
      }
    }
    const matrix = new VectorMatrix(d, data, rowIds, paths, ordinals);
    if (!held) return new MemorySnapshot(generation, matrix, symbols);
    // The dictionary's live size is known once BM25 was built; until then there is nothing to measure.
    const compact = this.#bm25 ? compacted(terms, held.dictionary, this.#bm25.terms) : { rows: terms, dictionary: held.dictionary };
    return new MemorySnapshot(generation, matrix, symbols, compact);
  }
}

/**
 * Code-point order, as SQLite's BINARY collation orders UTF-8: JavaScript's `<` compares UTF-16
 * code units, which puts U+E000..U+FFFF after the surrogate pairs of U+10000 and above.
 */
export function comparePaths(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

function codePointRank(unit: number): number {
  // surrogates (U+10000 and above) after U+E000..U+FFFF
  if (unit >= 0xe000) return unit - 0x800;
  if (unit >= 0xd800) return unit + 0x2000;
  return unit;
}
