import { SEVERITIES } from '../../vision/analysis/types.ts';
import { escapeMarkdown as md } from './escape.ts';
import { DASH, formatCount, formatLimit, formatMs, formatRate, formatWhen, METRIC_NAMES, verdictOf } from './report-format.ts';
import type { ProjectReport, ReportMetrics } from './report.types.ts';

/** Days of queries the markdown lists: a month reads as a table, a year does not. */
export const MARKDOWN_DAYS = 31;

type Align = 'left' | 'right';

/** A table of trusted headers and cells already escaped (or made of figures). */
function table(headers: ReadonlyArray<readonly [string, Align]>, rows: readonly (readonly string[])[]): string {
  const head = `| ${headers.map(([h]) => h).join(' | ')} |`;
  const rule = `|${headers.map(([, a]) => (a === 'right' ? ' ---: ' : ' --- ')).join('|')}|`;
  return [head, rule, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

const none = (what: string): string => `_No ${what} yet._`;

// Even the report's own strings (times, statuses) are escaped: a report can be built by other code.
const when = (iso: string | null): string => md(formatWhen(iso));

/** The project report as markdown: headings, bullet figures and tables; every name escaped. */
export function renderMarkdown(report: ProjectReport): string {
  const parts: string[] = [
    `# Project report: ${md(report.projectName)}`,
    [
      `Generated ${when(report.generatedAt)}`,
      report.since === null ? 'covering everything recorded' : `covering ${when(report.since)} onwards`,
      report.collectionName === null ? 'all collections' : `collection ${md(report.collectionName)}`,
    ].join(' · '),
    '## Collections',
    report.collections.length === 0
      ? none('collections')
      : table(
          [
            ['Collection', 'left'],
            ['Project path', 'left'],
            ['Files', 'right'],
            ['Chunks', 'right'],
            ['Indexed', 'left'],
            ['Last job', 'left'],
          ],
          report.collections.map((c) => [
            md(c.collectionName),
            c.projectPath === null ? DASH : md(c.projectPath),
            formatCount(c.files),
            formatCount(c.chunks),
            when(c.indexedAt),
            c.lastJobStatus === null ? DASH : md(c.lastJobStatus),
          ]),
        ),
  ];
  if (report.metrics) parts.push(...metricsSection(report.metrics));
  else parts.push('_Indexing, query, vision and usage figures were left out (includeMetrics: false)._');
  parts.push(...visualTestsSection(report), ...validationsSection(report), ...generationsSection(report));
  return `${parts.join('\n\n')}\n`;
}

function metricsSection({ indexing, queries, vision, usage }: ReportMetrics): string[] {
  const parts = [
    '## Indexing',
    [
      `- Runs: ${formatCount(indexing.runs)} (${formatCount(indexing.completed)} completed, ${formatCount(indexing.failed)} failed)`,
      `- Files indexed: ${formatCount(indexing.filesIndexed)}`,
      `- Time spent indexing: ${formatMs(indexing.totalDurationMs)}; median run ${formatMs(indexing.medianDurationMs)}`,
    ].join('\n'),
  ];
  if (indexing.recent.length > 0) {
    parts.push(
      '### Recent runs',
      table(
        [
          ['Job', 'left'],
          ['Collection', 'left'],
          ['Status', 'left'],
          ['Files', 'right'],
          ['Chunks', 'right'],
          ['Duration', 'right'],
          ['Finished', 'left'],
        ],
        indexing.recent.map((j) => [
          md(j.jobId),
          md(j.collectionName),
          md(j.status),
          formatCount(j.filesIndexed),
          formatCount(j.chunks),
          formatMs(j.durationMs),
          when(j.finishedAt),
        ]),
      ),
    );
  }

  parts.push(
    '## Queries',
    [
      `- Queries: ${formatCount(queries.count)}, of which ${formatCount(queries.cached)} answered from the cache (${formatRate(queries.cacheHitRate)})`,
      `- Latency: ${queries.latencyMs ? `p50 ${formatMs(queries.latencyMs.p50)}, p95 ${formatMs(queries.latencyMs.p95)}, max ${formatMs(queries.latencyMs.max)}` : DASH}`,
    ].join('\n'),
  );
  if (queries.byCollection.length > 0) {
    parts.push(
      '### By collection',
      table(
        [
          ['Collection', 'left'],
          ['Queries', 'right'],
        ],
        queries.byCollection.map((c) => [md(c.collectionName), formatCount(c.count)]),
      ),
    );
  }
  if (queries.perDay.length > 0) {
    const shown = queries.perDay.slice(-MARKDOWN_DAYS);
    parts.push(
      shown.length < queries.perDay.length ? `### Per day (the last ${MARKDOWN_DAYS} of ${queries.perDay.length})` : '### Per day',
      table(
        [
          ['Day (UTC)', 'left'],
          ['Queries', 'right'],
        ],
        shown.map((d) => [md(d.day), formatCount(d.count)]),
      ),
    );
  }

  parts.push(
    '## Vision',
    `- Captures: ${formatCount(vision.captures)}\n- Analyses: ${formatCount(vision.analyses)}`,
    '### Findings by severity',
    table(
      [
        ['Severity', 'left'],
        ['Findings', 'right'],
      ],
      SEVERITIES.map((s) => [s, formatCount(vision.findings.bySeverity[s])]),
    ),
  );
  if (vision.findings.byType.length > 0) {
    parts.push(
      '### Findings by type',
      table(
        [
          ['Type', 'left'],
          ['Findings', 'right'],
        ],
        vision.findings.byType.map((t) => [md(t.type), formatCount(t.count)]),
      ),
    );
  }

  parts.push(
    usage === null
      ? '## Usage\n\n_No key on this request: operators are not metered._'
      : `## Usage${usage.period === null ? '' : ` (${md(usage.period)})`}`,
  );
  if (usage !== null) {
    parts.push(
      table(
        [
          ['Metric', 'left'],
          ['Used', 'right'],
          ['Limit', 'right'],
          ['Remaining', 'right'],
        ],
        usage.metrics.map((m) => [
          METRIC_NAMES[m.metric] ?? md(m.metric),
          formatCount(m.used),
          formatLimit(m.limit),
          formatLimit(m.remaining),
        ]),
      ),
    );
  }
  return parts;
}

function visualTestsSection({ visualTests }: ProjectReport): string[] {
  const parts = [
    '## Visual tests',
    `- Runs: ${formatCount(visualTests.runs)} (${formatCount(visualTests.passedRuns)} passed, ${formatCount(visualTests.failedRuns)} with failures)`,
  ];
  if (visualTests.history.length === 0) return [...parts, none('visual test runs')];
  return [
    ...parts,
    '### History (oldest first)',
    table(
      [
        ['Ran', 'left'],
        ['Suite', 'left'],
        ['URL', 'left'],
        ['Passed', 'right'],
        ['Failed', 'right'],
      ],
      visualTests.history.map((r) => [when(r.ranAt), md(r.suite), md(r.url), formatCount(r.passed), formatCount(r.failed)]),
    ),
  ];
}

function validationsSection({ validations: v }: ProjectReport): string[] {
  const parts = [
    '## Validations',
    `- Validations: ${formatCount(v.count)} (${formatCount(v.valid)} valid, ${formatCount(v.invalid)} invalid, ${formatCount(v.undecided)} undecided)`,
  ];
  if (v.recent.length === 0) return [...parts, none('validations')];
  return [
    ...parts,
    '### Recent',
    table(
      [
        ['Validated', 'left'],
        ['Component', 'left'],
        ['Verdict', 'left'],
        ['Confidence', 'right'],
        ['Checks passed / failed / unknown', 'right'],
      ],
      v.recent.map((r) => [
        when(r.validatedAt),
        md(r.component),
        verdictOf(r.valid),
        formatRate(r.confidence),
        `${r.checks.passed} / ${r.checks.failed} / ${r.checks.unknown}`,
      ]),
    ),
  ];
}

function generationsSection({ generations: g }: ProjectReport): string[] {
  const parts = ['## Generated tests', `- Generations: ${formatCount(g.count)}, ${formatCount(g.cases)} test cases`];
  if (g.byTestType.length === 0) return [...parts, none('generated tests')];
  return [
    ...parts,
    table(
      [
        ['Test type', 'left'],
        ['Generations', 'right'],
      ],
      g.byTestType.map((t) => [md(t.testType), formatCount(t.count)]),
    ),
  ];
}
