/**
 * The arithmetic of the project report (pure): percentiles, medians, rates and days, so the report
 * and its tests agree on one definition of each.
 */

/**
 * Nearest-rank percentile (p in 0..100): always a value that was observed, so a p50 of query
 * latencies is the latency of a real query, never an average of two. Null for no values.
 */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((Math.min(Math.max(p, 0), 100) / 100) * sorted.length);
  return sorted[Math.max(rank, 1) - 1]!;
}

/** The middle value, or the mean of the two middle ones; null for no values. */
export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export const sum = (values: readonly number[]): number => values.reduce((total, v) => total + v, 0);

/** part / whole, null when there is no whole (a rate of nothing is not 0%). */
export const rate = (part: number, whole: number): number | null => (whole > 0 ? part / whole : null);

export const utcDay = (date: Date): string => date.toISOString().slice(0, 10);

const DAY_MS = 86_400_000;

/**
 * How many dates fall on each UTC day, oldest first, from the first day to the last with the quiet
 * days in between at 0: a chart of the list shows the gaps as gaps.
 */
export function perDay(dates: readonly Date[]): Array<{ day: string; count: number }> {
  if (dates.length === 0) return [];
  const counts = new Map<string, number>();
  let first = Infinity;
  let last = -Infinity;
  for (const date of dates) {
    const day = Math.floor(date.getTime() / DAY_MS) * DAY_MS;
    first = Math.min(first, day);
    last = Math.max(last, day);
    const key = utcDay(date);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const days: Array<{ day: string; count: number }> = [];
  for (let t = first; t <= last; t += DAY_MS) {
    const day = utcDay(new Date(t));
    days.push({ day, count: counts.get(day) ?? 0 });
  }
  return days;
}

/** Counts per key, largest first, ties by key: a stable order for tables and tests. */
export function tally<T>(
  items: readonly T[],
  keyOf: (item: T) => string,
  amountOf: (item: T) => number = () => 1,
): Array<{ key: string; count: number }> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(keyOf(item), (counts.get(keyOf(item)) ?? 0) + amountOf(item));
  return [...counts]
    .map(([key, count]) => ({ key, count }))
    .sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** At or after `since` (no since: everything). */
export const atOrAfter =
  (since: Date | null) =>
  (date: Date | null | undefined): boolean =>
    since === null || (date instanceof Date && date.getTime() >= since.getTime());
