/**
 * What every benchmark reports to `npm run bench` (bench/all.ts): one line on stdout,
 * `BENCH_FIGURES {json}`, after its own human-readable table. Each figure is ours against a baseline
 * measured in the same run (a bare Express route, bare kafkajs, a raw node:http route, raw consume),
 * never an absolute number judged alone.
 */

export interface BenchFigure {
  /** What was measured, e.g. "POST /validate req/s". */
  figure: string;
  /** Our measurement, in `unit`. */
  ours: number;
  /** The baseline's, in `unit`; null when the figure is absolute (a latency bound). */
  baseline: number | null;
  /** What the baseline is, e.g. "bare Express". */
  baselineName: string | null;
  unit: string;
  /** The target as written in the issue, e.g. ">= 1.0x" or "< 5 ms". */
  target: string;
  /** Whether the target was met; null when the run could not judge it. */
  met: boolean | null;
}

export interface BenchReport {
  bench: string;
  figures: BenchFigure[];
}

export const FIGURES_PREFIX = 'BENCH_FIGURES ';

/** Writes the machine-readable line `npm run bench` collects. */
export function emitFigures(bench: string, figures: BenchFigure[]): void {
  process.stdout.write(`${FIGURES_PREFIX}${JSON.stringify({ bench, figures } satisfies BenchReport)}\n`);
}

/** The reports in a benchmark's stdout, in order. */
export function parseFigures(stdout: string): BenchReport[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith(FIGURES_PREFIX))
    .map((line) => JSON.parse(line.slice(FIGURES_PREFIX.length)) as BenchReport);
}

/** ours ÷ baseline, or NaN without a baseline. */
export function ratioOf(f: BenchFigure): number {
  return f.baseline === null || f.baseline === 0 ? Number.NaN : f.ours / f.baseline;
}

/** The p-th percentile (nearest rank) of values sorted ascending. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
