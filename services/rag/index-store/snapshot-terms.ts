/**
 * The search terms of a snapshot's rows, held compactly so BM25 can run in memory (memory-bm25.ts)
 * and follow writes by patching, as the vectors do: each row keeps its terms as ids into a
 * dictionary that the snapshots of one store share, with their counts per column, instead of a map
 * of strings per chunk (a quarter of a million entries for a 2,400-chunk package).
 */

import type { ChunkTerms } from './bm25-terms.ts';
import { MemoryBm25 } from './memory-bm25.ts';

/** Term <-> id. Only grows; `compacted` starts a new one holding only the terms rows still use. */
export class TermDictionary {
  readonly #ids = new Map<string, number>();
  readonly #terms: string[] = [];

  get size(): number {
    return this.#terms.length;
  }

  idOf(term: string): number {
    let id = this.#ids.get(term);
    if (id === undefined) {
      id = this.#terms.length;
      this.#ids.set(term, id);
      this.#terms.push(term);
    }
    return id;
  }

  term(id: number): string {
    const term = this.#terms[id];
    if (term === undefined) throw new RangeError(`no term ${id}`);
    return term;
  }
}

/** One row's terms: ids, and for each the occurrences in the symbol, path and body columns. */
export interface RowTerms {
  readonly ids: Int32Array;
  /** three per id: symbol, path, body */
  readonly counts: Int32Array;
  /** tokens in all three columns: BM25's document length */
  readonly length: number;
}

export function encodeTerms(terms: ChunkTerms, dictionary: TermDictionary): RowTerms {
  const ids = new Int32Array(terms.counts.size);
  const counts = new Int32Array(terms.counts.size * 3);
  let i = 0;
  for (const [term, c] of terms.counts) {
    ids[i] = dictionary.idOf(term);
    counts[i * 3] = c.symbol;
    counts[i * 3 + 1] = c.path;
    counts[i * 3 + 2] = c.body;
    i++;
  }
  return { ids, counts, length: terms.length };
}

/** BM25 over `rows` (row i is the snapshot's row i), and how many distinct terms they use. */
export function memoryBm25Of(rows: readonly RowTerms[], dictionary: TermDictionary): { bm25: MemoryBm25; terms: number } {
  const df = new Int32Array(dictionary.size);
  let tokens = 0;
  let total = 0;
  for (const r of rows) {
    tokens += r.length;
    total += r.ids.length;
    for (let i = 0; i < r.ids.length; i++) {
      const id = r.ids[i] as number;
      df[id] = (df[id] as number) + 1;
    }
  }
  // Slots for the terms in use, in id order, each with its range of the shared arrays.
  const slotOf = new Int32Array(dictionary.size).fill(-1);
  const slots = new Map<string, number>();
  const starts: number[] = [];
  let at = 0;
  for (let id = 0; id < df.length; id++) {
    const n = df[id] as number;
    if (n === 0) continue;
    slotOf[id] = slots.size;
    slots.set(dictionary.term(id), slots.size);
    starts.push(at);
    at += n;
  }
  const offsets = Int32Array.from([...starts, at]);
  const [postingRows, inSymbol, inPath, inBody] = [
    new Int32Array(total),
    new Int32Array(total),
    new Int32Array(total),
    new Int32Array(total),
  ];
  // Filled in row order, so each term's rows ascend as the database's postings do.
  const filled = offsets.slice(0, -1);
  const lengths = new Int32Array(rows.length);
  rows.forEach((r, row) => {
    lengths[row] = r.length;
    for (let i = 0; i < r.ids.length; i++) {
      const slot = slotOf[r.ids[i] as number] as number;
      const to = filled[slot] as number;
      filled[slot] = to + 1;
      postingRows[to] = row;
      inSymbol[to] = r.counts[i * 3] as number;
      inPath[to] = r.counts[i * 3 + 1] as number;
      inBody[to] = r.counts[i * 3 + 2] as number;
    }
  });
  const packed = { slots, offsets, rows: postingRows, inSymbol, inPath, inBody };
  return { bm25: new MemoryBm25(packed, lengths, rows.length, tokens), terms: slots.size };
}

/**
 * The same rows over a dictionary of only the terms they use, when the shared one has grown past
 * twice that (files re-indexed again and again leave the terms they no longer hold behind).
 */
export function compacted(
  rows: readonly RowTerms[],
  dictionary: TermDictionary,
  termsInUse: number,
): { rows: readonly RowTerms[]; dictionary: TermDictionary } {
  if (dictionary.size <= 2 * termsInUse + 1024) return { rows, dictionary };
  const fresh = new TermDictionary();
  const remap = new Int32Array(dictionary.size).fill(-1);
  const moved = rows.map((r) => {
    const ids = new Int32Array(r.ids.length);
    for (let i = 0; i < r.ids.length; i++) {
      const old = r.ids[i] as number;
      let id = remap[old] as number;
      if (id === -1) remap[old] = id = fresh.idOf(dictionary.term(old));
      ids[i] = id;
    }
    return { ids, counts: r.counts, length: r.length };
  });
  return { rows: moved, dictionary: fresh };
}
