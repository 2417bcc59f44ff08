/**
 * Reciprocal rank fusion (Cormack, Clarke & Büttcher 2009): each list gives an item
 * weight / (k + rank), ranks from 1. It needs no score calibration between BM25 and cosine, whose
 * scales have nothing in common, and k = 60 (the paper's) keeps one list's top item from drowning
 * an item both lists rank well.
 */

export interface RankedList<K> {
  /** best first */
  readonly items: readonly K[];
  readonly weight?: number;
}

export interface Fused<K> {
  readonly item: K;
  readonly score: number;
  /** 1-based rank in each list, undefined where the list does not have it */
  readonly ranks: ReadonlyArray<number | undefined>;
}

export const RRF_K = 60;

/**
 * Items by fused score, best first. Ties go to the item with the better best rank, then to the
 * earlier list, then to the order within it: the result depends only on the lists.
 */
export function reciprocalRankFusion<K>(lists: ReadonlyArray<RankedList<K>>, k: number = RRF_K): Array<Fused<K>> {
  if (!(k >= 0)) throw new RangeError(`the RRF constant must be >= 0, got ${k}`);
  const entries = new Map<K, { score: number; ranks: Array<number | undefined>; firstSeen: number }>();
  let seen = 0;
  lists.forEach((list, l) => {
    const weight = list.weight ?? 1;
    list.items.forEach((item, i) => {
      let entry = entries.get(item);
      if (!entry) {
        entry = { score: 0, ranks: lists.map(() => undefined), firstSeen: seen++ };
        entries.set(item, entry);
      }
      // An item listed twice in one list counts at its best rank only.
      if (entry.ranks[l] !== undefined) return;
      entry.ranks[l] = i + 1;
      entry.score += weight / (k + i + 1);
    });
  });
  const bestRank = (ranks: ReadonlyArray<number | undefined>) => Math.min(...ranks.map((r) => r ?? Infinity));
  return [...entries.entries()]
    .sort(([, a], [, b]) => b.score - a.score || bestRank(a.ranks) - bestRank(b.ranks) || a.firstSeen - b.firstSeen)
    .map(([item, { score, ranks }]) => ({ item, score, ranks }));
}
