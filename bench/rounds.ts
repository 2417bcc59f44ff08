/**
 * A figure measured over rounds, as the benches judge it: the median, with the spread (lowest to
 * highest round) beside it, and a comparison with an earlier run that calls a move of the median
 * smaller than the spread "no change". Pure: no I/O.
 */

export interface Rounds {
  median: number;
  min: number;
  max: number;
  /** Every round's value, in the order measured. */
  values: number[];
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/**
 * The item of median value, one that was measured rather than an average of two: the higher of the
 * middle two for an even count. Throws on none.
 */
export function middleOf<T>(items: readonly T[], measure: (item: T) => number): T {
  const sorted = [...items].sort((a, b) => measure(a) - measure(b));
  const middle = sorted[sorted.length >> 1];
  if (middle === undefined) throw new Error('middleOf: no items');
  return middle;
}

export function roundsOf(values: readonly number[]): Rounds {
  return {
    median: median(values),
    min: values.length ? Math.min(...values) : Number.NaN,
    max: values.length ? Math.max(...values) : Number.NaN,
    values: [...values],
  };
}

/** "1.23 (spread 1.01–1.40 over 5 rounds)", with the caller's number format. */
export function formatRounds(r: Rounds, fmt: (n: number) => string): string {
  return `${fmt(r.median)} (spread ${fmt(r.min)}–${fmt(r.max)} over ${r.values.length} round${r.values.length === 1 ? '' : 's'})`;
}

export type Change = 'no change' | 'better' | 'worse';

/**
 * This run's median against an earlier run's: "no change" when it moved by less than the wider of
 * the two spreads (the rounds of either run differ more than the runs do), else better or worse.
 */
export function compareRounds(before: Rounds, now: Rounds, higherIsBetter: boolean): { change: Change; delta: number; spread: number } {
  const delta = now.median - before.median;
  const spread = Math.max(before.max - before.min, now.max - now.min);
  if (!(Math.abs(delta) >= spread) || delta === 0) return { change: 'no change', delta, spread };
  return { change: delta > 0 === higherIsBetter ? 'better' : 'worse', delta, spread };
}

/** What a run keeps for the next one to compare with (BENCH_SAVE / BENCH_BASELINE). */
export interface SavedRun {
  bench: string;
  at: string;
  figures: Record<string, Rounds & { higherIsBetter: boolean }>;
}

/** Rounds each run needs for its spread to say anything. */
export const MIN_ROUNDS_TO_COMPARE = 3;

/** One line per figure the earlier run also had. */
export function comparisonLines(before: SavedRun, now: SavedRun['figures'], fmt: (n: number) => string): string[] {
  const lines: string[] = [];
  for (const [name, cur] of Object.entries(now)) {
    const prev = before.figures[name];
    if (!prev) continue;
    const { change, delta, spread } = compareRounds(prev, cur, cur.higherIsBetter);
    // A spread needs rounds: with fewer than three on either side there is none to judge a move by.
    const judged = Math.min(prev.values.length, cur.values.length) >= MIN_ROUNDS_TO_COMPARE ? change : 'too few rounds to judge';
    lines.push(
      `${name}: ${fmt(prev.median)} -> ${fmt(cur.median)} (${delta >= 0 ? '+' : ''}${fmt(delta)}, spread ${fmt(spread)}): ${judged}`,
    );
  }
  return lines;
}
