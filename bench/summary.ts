/**
 * The one table `npm run bench` (bench/all.ts) prints at the end: every figure every benchmark
 * reported (bench/figures.ts), with ours, the baseline, their ratio, the target and whether it was
 * met; and a line for each benchmark that failed, was skipped or reported nothing. Pure: no I/O.
 */
import { ratioOf, type BenchFigure, type BenchReport } from './figures.ts';

/** How one benchmark's child process ended. */
export interface BenchOutcome {
  /** The benchmark's file name without .ts, e.g. "replay". */
  name: string;
  status: 'ok' | 'failed' | 'skipped';
  /** Why it failed or was skipped, e.g. "exit code 1", "bench/webhook-to-key.ts does not exist". */
  reason?: string;
  reports: BenchReport[];
  seconds?: number;
}

export type Verdict = 'MET' | 'MISSED' | 'n/a';

export function verdict(f: Pick<BenchFigure, 'met'>): Verdict {
  return f.met === true ? 'MET' : f.met === false ? 'MISSED' : 'n/a';
}

/** A figure for the table: whole numbers and anything from 100 up with thousands separators, a few significant digits below. */
export function formatNumber(n: number): string {
  if (!Number.isFinite(n)) return '—';
  const abs = Math.abs(n);
  if (abs >= 100 || Number.isInteger(n)) return Math.round(n).toLocaleString('en-US');
  if (abs >= 10) return n.toFixed(1);
  if (abs >= 1 || abs === 0) return n.toFixed(2);
  return n.toPrecision(2);
}

export function formatRatio(f: BenchFigure): string {
  const r = ratioOf(f);
  return Number.isNaN(r) ? '—' : `${r.toFixed(2)}x`;
}

const withUnit = (n: number, unit: string) => (unit ? `${formatNumber(n)} ${unit}` : formatNumber(n));

export interface SummaryRow {
  bench: string;
  figure: string;
  ours: string;
  baseline: string;
  ratio: string;
  target: string;
  result: string;
}

export function summaryRows(outcomes: readonly BenchOutcome[]): SummaryRow[] {
  const rows: SummaryRow[] = [];
  for (const o of outcomes) {
    const figures = o.reports.flatMap((r) => r.figures);
    for (const f of figures) {
      rows.push({
        bench: o.name,
        figure: f.figure,
        ours: withUnit(f.ours, f.unit),
        baseline: f.baseline === null ? '—' : `${withUnit(f.baseline, f.unit)}${f.baselineName ? ` (${f.baselineName})` : ''}`,
        ratio: formatRatio(f),
        target: f.target,
        result: verdict(f),
      });
    }
    if (o.status !== 'ok' || figures.length === 0) {
      const result = o.status === 'failed' ? 'FAILED' : o.status === 'skipped' ? 'SKIPPED' : 'NO FIGURES';
      const why = o.reason ?? (o.status === 'ok' ? 'the benchmark reported no figures' : '');
      rows.push({ bench: o.name, figure: why, ours: '', baseline: '', ratio: '', target: '', result });
    }
  }
  return rows;
}

/** Counts for the closing line. */
export function tally(outcomes: readonly BenchOutcome[]): {
  met: number;
  missed: number;
  unjudged: number;
  failed: string[];
  skipped: string[];
} {
  const figures = outcomes.flatMap((o) => o.reports.flatMap((r) => r.figures));
  return {
    met: figures.filter((f) => f.met === true).length,
    missed: figures.filter((f) => f.met === false).length,
    unjudged: figures.filter((f) => f.met === null).length,
    failed: outcomes.filter((o) => o.status === 'failed').map((o) => o.name),
    skipped: outcomes.filter((o) => o.status === 'skipped').map((o) => o.name),
  };
}

const COLUMNS: { key: keyof SummaryRow; title: string; right?: boolean }[] = [
  { key: 'bench', title: 'bench' },
  { key: 'figure', title: 'figure' },
  { key: 'ours', title: 'ours', right: true },
  { key: 'baseline', title: 'baseline', right: true },
  { key: 'ratio', title: 'ratio', right: true },
  { key: 'target', title: 'target' },
  { key: 'result', title: 'result' },
];

/** The summary table and its closing line, as text. */
export function formatSummary(outcomes: readonly BenchOutcome[]): string {
  const rows = summaryRows(outcomes);
  const cells = [Object.fromEntries(COLUMNS.map((c) => [c.key, c.title])) as unknown as SummaryRow, ...rows];
  const widths = COLUMNS.map((c) => Math.max(...cells.map((r) => r[c.key].length)));
  const line = (r: SummaryRow) =>
    COLUMNS.map((c, i) => (c.right ? r[c.key].padStart(widths[i]!) : r[c.key].padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  const t = tally(outcomes);
  const closing = [
    `${t.met} met, ${t.missed} missed${t.unjudged ? `, ${t.unjudged} not judged` : ''}`,
    t.failed.length ? `FAILED: ${t.failed.join(', ')}` : '',
    t.skipped.length ? `skipped: ${t.skipped.join(', ')}` : '',
  ]
    .filter(Boolean)
    .join('; ');
  return [line(cells[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line), '', closing].join('\n');
}
