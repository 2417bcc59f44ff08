import { SEVERITIES, type Severity } from '../../vision/analysis/types.ts';
import { escapeHtml as esc } from './escape.ts';
import { DASH, formatCount, formatLimit, formatMs, formatRate, formatWhen, METRIC_NAMES, verdictOf } from './report-format.ts';
import type { ProjectReport, ReportMetrics } from './report.types.ts';
import { barRows, columnChart, noData, splitBar, type BarRow, type Column } from './svg-charts.ts';

/**
 * The project report as one self-contained page: inline CSS and inline SVG, no script, nothing to
 * fetch. The policy forbids everything else, so a name that slipped past escaping still could not
 * load or run anything; escaping is what keeps it from changing the page at all.
 */
export const CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

/** Days of queries the chart draws: beyond two months a column is thinner than a pixel's worth. */
export const CHART_DAYS = 60;

const COLORS = {
  queries: '#1a73e8',
  passed: '#1e8e3e',
  failed: '#d93025',
  undecided: '#9aa0a6',
  quota: '#1a73e8',
  quotaNearlyUsed: '#d93025',
  severity: { minor: '#8ab4f8', moderate: '#f9ab00', serious: '#e8710a', critical: '#a50e0e' } satisfies Record<Severity, string>,
} as const;

const STYLE = `
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; background: #f6f7f9; color: #202124; font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 880px; margin: 0 auto; padding: 32px 24px 48px; }
h1 { font-size: 26px; margin: 0 0 4px; overflow-wrap: anywhere; }
h2 { font-size: 18px; margin: 0 0 12px; }
h3 { font-size: 14px; margin: 18px 0 8px; color: #3c4043; }
.meta { color: #5f6368; margin: 0 0 24px; overflow-wrap: anywhere; }
section { background: #fff; border: 1px solid #e3e6ea; border-radius: 8px; padding: 18px 20px; margin: 0 0 16px; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 12px; background: none; border: 0; padding: 0; }
.card { background: #fff; border: 1px solid #e3e6ea; border-radius: 8px; padding: 12px 14px; }
.card .value { font-size: 22px; font-weight: 600; }
.card .label { color: #5f6368; font-size: 12px; }
.figures { margin: 0 0 12px; padding-left: 18px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid #eef0f3; vertical-align: top; overflow-wrap: anywhere; }
th { color: #5f6368; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.chart { display: block; width: 100%; max-width: 720px; height: auto; margin: 4px 0 8px; font-family: inherit; }
.chart text { fill: #3c4043; }
.no-data { color: #5f6368; font-style: italic; margin: 4px 0 8px; }
/* Darker than the chart colours: text needs 4.5:1 on white (axe color-contrast), bars do not. */
.status-valid, .status-completed { color: #137333; }
.status-invalid, .status-failed { color: #a50e0e; }
footer { color: #5f6368; font-size: 12px; text-align: center; }
@media print { body { background: #fff; } section, .card { break-inside: avoid; } }
`;

type Cell = { text: string; numeric?: boolean; className?: string };
const num = (text: string): Cell => ({ text, numeric: true });

/** A table whose every cell is escaped here. */
function table(headers: readonly (string | Cell)[], rows: readonly (readonly (string | Cell)[])[]): string {
  const cell = (tag: 'th' | 'td', c: string | Cell): string => {
    const { text, numeric, className } = typeof c === 'string' ? { text: c } : c;
    const classes = [numeric ? 'num' : '', className ?? ''].filter(Boolean).join(' ');
    return `<${tag}${classes ? ` class="${esc(classes)}"` : ''}>${esc(text)}</${tag}>`;
  };
  return `<table><thead><tr>${headers.map((h) => cell('th', h)).join('')}</tr></thead><tbody>${rows.map((r) => `<tr>${r.map((c) => cell('td', c)).join('')}</tr>`).join('')}</tbody></table>`;
}

const section = (id: string, title: string, body: string): string =>
  `<section id="${id}" aria-labelledby="${id}-h"><h2 id="${id}-h">${esc(title)}</h2>${body}</section>`;
const figures = (items: readonly string[]): string => `<ul class="figures">${items.map((i) => `<li>${esc(i)}</li>`).join('')}</ul>`;
const card = (value: string, label: string): string =>
  `<div class="card"><div class="value">${esc(value)}</div><div class="label">${esc(label)}</div></div>`;
const statusCell = (status: string): Cell => ({ text: status, className: `status-${status.replace(/[^a-z]/g, '')}` });

export function renderHtml(report: ProjectReport): string {
  const title = `Project report: ${report.projectName}`;
  const scope = [
    `Generated ${formatWhen(report.generatedAt)}`,
    report.since === null ? 'covering everything recorded' : `covering ${formatWhen(report.since)} onwards`,
    report.collectionName === null ? 'all collections' : `collection ${report.collectionName}`,
  ].join(' · ');
  const body = [
    `<header><h1>${esc(title)}</h1><p class="meta">${esc(scope)}</p></header>`,
    `<section class="cards" aria-label="Key figures">${keyFigures(report)}</section>`,
    collectionsSection(report),
    ...(report.metrics
      ? metricsSections(report.metrics)
      : [section('metrics', 'Metrics', noData('Indexing, query, vision and usage figures were left out (includeMetrics: false).'))]),
    visualTestsSection(report),
    validationsSection(report),
    generationsSection(report),
    `<footer>Computed from the events of your account${report.since === null ? '' : ` at or after ${esc(formatWhen(report.since))}`}.</footer>`,
  ].join('\n');
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${CONTENT_SECURITY_POLICY}">`,
    '<meta name="referrer" content="no-referrer">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${esc(title)}</title>`,
    `<style>${STYLE}</style>`,
    '</head>',
    `<body><main>${body}</main></body>`,
    '</html>',
    '',
  ].join('\n');
}

function keyFigures({ metrics, visualTests, validations, generations }: ProjectReport): string {
  const cards: string[] = [];
  if (metrics) {
    cards.push(
      card(formatCount(metrics.queries.count), 'queries'),
      card(formatRate(metrics.queries.cacheHitRate), 'cache hit rate'),
      card(formatMs(metrics.queries.latencyMs?.p50 ?? null), 'median query latency'),
      card(formatCount(metrics.indexing.filesIndexed), 'files indexed'),
    );
  }
  cards.push(
    card(`${formatCount(visualTests.passedRuns)} / ${formatCount(visualTests.runs)}`, 'visual test runs passed'),
    card(`${formatCount(validations.valid)} / ${formatCount(validations.count)}`, 'validations valid'),
    card(formatCount(generations.cases), 'test cases generated'),
  );
  return cards.join('');
}

function collectionsSection({ collections }: ProjectReport): string {
  if (collections.length === 0) return section('collections', 'Collections', noData('No collections yet.'));
  return section(
    'collections',
    'Collections',
    table(
      ['Collection', 'Project path', num('Files'), num('Chunks'), 'Indexed', 'Last job'],
      collections.map((c) => [
        c.collectionName,
        c.projectPath ?? DASH,
        num(formatCount(c.files)),
        num(formatCount(c.chunks)),
        formatWhen(c.indexedAt),
        c.lastJobStatus ? statusCell(c.lastJobStatus) : DASH,
      ]),
    ),
  );
}

function metricsSections({ indexing, queries, vision, usage }: ReportMetrics): string[] {
  const indexingBody = [
    figures([
      `Runs: ${formatCount(indexing.runs)} (${formatCount(indexing.completed)} completed, ${formatCount(indexing.failed)} failed)`,
      `Files indexed: ${formatCount(indexing.filesIndexed)}`,
      `Time spent indexing: ${formatMs(indexing.totalDurationMs)}; median run ${formatMs(indexing.medianDurationMs)}`,
    ]),
    indexing.recent.length === 0
      ? noData('No index runs yet.')
      : `<h3>Recent runs</h3>${table(
          ['Job', 'Collection', 'Status', num('Files'), num('Chunks'), num('Duration'), 'Finished'],
          indexing.recent.map((j) => [
            j.jobId,
            j.collectionName,
            statusCell(j.status),
            num(formatCount(j.filesIndexed)),
            num(formatCount(j.chunks)),
            num(formatMs(j.durationMs)),
            formatWhen(j.finishedAt),
          ]),
        )}`,
  ].join('');

  const days = queries.perDay.slice(-CHART_DAYS);
  const every = Math.max(1, Math.ceil(days.length / 8));
  const dayColumns: Column[] = days.map((d, i) => ({
    label: d.day,
    tick: i % every === 0 || i === days.length - 1 ? d.day.slice(5) : '',
    segments: [{ label: d.count === 1 ? 'query' : 'queries', value: d.count, color: COLORS.queries }],
  }));
  const busiest = days.reduce<{ day: string; count: number } | null>((b, d) => (b === null || d.count > b.count ? d : b), null);
  const queriesBody = [
    figures([
      `Queries: ${formatCount(queries.count)}, of which ${formatCount(queries.cached)} answered from the cache (${formatRate(queries.cacheHitRate)})`,
      `Latency: ${queries.latencyMs ? `p50 ${formatMs(queries.latencyMs.p50)}, p95 ${formatMs(queries.latencyMs.p95)}, max ${formatMs(queries.latencyMs.max)}` : DASH}`,
    ]),
    `<h3>Queries per day${days.length < queries.perDay.length ? ` (the last ${CHART_DAYS} days)` : ''}</h3>`,
    columnChart(
      {
        id: 'queries-per-day',
        title: 'Queries per day (UTC)',
        description:
          days.length === 0
            ? 'No queries.'
            : `${days.length} days from ${days[0]!.day} to ${days.at(-1)!.day}; busiest ${busiest!.day} with ${busiest!.count}.`,
      },
      dayColumns,
      { emptyNote: 'No queries yet.' },
    ),
    queries.byCollection.length === 0
      ? ''
      : `<h3>By collection</h3>${table(
          ['Collection', num('Queries')],
          queries.byCollection.map((c) => [c.collectionName, num(formatCount(c.count))]),
        )}`,
  ].join('');

  const severityMax = SEVERITIES.reduce((m, s) => Math.max(m, vision.findings.bySeverity[s]), 0);
  const severityRows: BarRow[] = SEVERITIES.map((s) => ({
    label: s,
    value: vision.findings.bySeverity[s],
    max: severityMax,
    valueLabel: formatCount(vision.findings.bySeverity[s]),
    color: COLORS.severity[s],
  }));
  const visionBody = [
    figures([`Captures: ${formatCount(vision.captures)}`, `Analyses: ${formatCount(vision.analyses)}`]),
    '<h3>Findings by severity</h3>',
    vision.analyses === 0
      ? noData('No analyses yet.')
      : barRows(
          {
            id: 'findings-by-severity',
            title: 'Findings by severity',
            description: SEVERITIES.map((s) => `${s}: ${vision.findings.bySeverity[s]}`).join(', '),
          },
          severityRows,
        ),
    vision.findings.byType.length === 0
      ? ''
      : `<h3>Findings by type</h3>${table(
          ['Type', num('Findings')],
          vision.findings.byType.map((t) => [t.type, num(formatCount(t.count))]),
        )}`,
  ].join('');

  return [
    section('indexing', 'Indexing', indexingBody),
    section('queries', 'Queries', queriesBody),
    section('vision', 'Vision', visionBody),
    usageSection(usage),
  ];
}

function usageSection(usage: ReportMetrics['usage']): string {
  if (usage === null) return section('usage', 'Usage', noData('No key on this request: operators are not metered.'));
  const rows: BarRow[] = usage.metrics.map((m) => {
    const unlimited = m.limit === -1;
    return {
      label: METRIC_NAMES[m.metric] ?? m.metric,
      value: m.used,
      max: unlimited ? 0 : m.limit,
      valueLabel: unlimited ? `${formatCount(m.used)} used · unlimited` : `${formatCount(m.used)} of ${formatLimit(m.limit)}`,
      color: !unlimited && m.used >= 0.9 * m.limit ? COLORS.quotaNearlyUsed : COLORS.quota,
    };
  });
  return section(
    'usage',
    `Usage${usage.period === null ? '' : ` (${usage.period})`}`,
    barRows(
      {
        id: 'usage-vs-quota',
        title: 'Usage against the monthly quota',
        description: rows.map((r) => `${r.label}: ${r.valueLabel}`).join('; '),
      },
      rows,
      'No quotas on this key.',
    ),
  );
}

function visualTestsSection({ visualTests }: ProjectReport): string {
  const { history } = visualTests;
  const every = Math.max(1, Math.ceil(history.length / 8));
  const columns: Column[] = history.map((r, i) => ({
    label: `${r.suite} at ${formatWhen(r.ranAt)}`,
    tick: i % every === 0 || i === history.length - 1 ? r.ranAt.slice(5, 10) : '',
    segments: [
      { label: 'passed', value: r.passed, color: COLORS.passed },
      { label: 'failed', value: r.failed, color: COLORS.failed },
    ],
  }));
  const body = [
    figures([
      `Runs: ${formatCount(visualTests.runs)} (${formatCount(visualTests.passedRuns)} passed, ${formatCount(visualTests.failedRuns)} with failures)`,
    ]),
    `<h3>Pass/fail history${visualTests.runs > history.length ? ` (the last ${history.length} runs)` : ''}</h3>`,
    columnChart(
      {
        id: 'visual-test-history',
        title: 'Visual test runs, oldest first: checks passed and failed',
        description:
          history.map((r) => `${r.suite} ${r.ranAt.slice(0, 10)}: ${r.passed} passed, ${r.failed} failed`).join('; ') || 'No runs.',
      },
      columns,
      {
        legend: [
          { label: 'passed', color: COLORS.passed },
          { label: 'failed', color: COLORS.failed },
        ],
        emptyNote: 'No visual test runs yet.',
      },
    ),
    history.length === 0
      ? ''
      : table(
          ['Ran', 'Suite', 'URL', num('Passed'), num('Failed')],
          [...history].reverse().map((r) => [formatWhen(r.ranAt), r.suite, r.url, num(formatCount(r.passed)), num(formatCount(r.failed))]),
        ),
  ].join('');
  return section('visual-tests', 'Visual tests', body);
}

function validationsSection({ validations: v }: ProjectReport): string {
  const body = [
    figures([
      `Validations: ${formatCount(v.count)} (${formatCount(v.valid)} valid, ${formatCount(v.invalid)} invalid, ${formatCount(v.undecided)} undecided)`,
    ]),
    splitBar(
      {
        id: 'validation-verdicts',
        title: 'Validation verdicts',
        description: `${v.valid} valid, ${v.invalid} invalid, ${v.undecided} undecided`,
      },
      [
        { label: 'valid', value: v.valid, color: COLORS.passed },
        { label: 'invalid', value: v.invalid, color: COLORS.failed },
        { label: 'undecided', value: v.undecided, color: COLORS.undecided },
      ],
      'No validations yet.',
    ),
    v.recent.length === 0
      ? ''
      : `<h3>Recent</h3>${table(
          ['Validated', 'Component', 'Verdict', num('Confidence'), num('Checks passed / failed / unknown')],
          v.recent.map((r) => [
            formatWhen(r.validatedAt),
            r.component,
            statusCell(verdictOf(r.valid)),
            num(formatRate(r.confidence)),
            num(`${r.checks.passed} / ${r.checks.failed} / ${r.checks.unknown}`),
          ]),
        )}`,
  ].join('');
  return section('validations', 'Validations', body);
}

function generationsSection({ generations: g }: ProjectReport): string {
  const body = [
    figures([`Generations: ${formatCount(g.count)}, ${formatCount(g.cases)} test cases`]),
    g.byTestType.length === 0
      ? noData('No generated tests yet.')
      : table(
          ['Test type', num('Generations')],
          g.byTestType.map((t) => [t.testType, num(formatCount(t.count))]),
        ),
  ].join('');
  return section('generations', 'Generated tests', body);
}
