import type { QuotaReport } from '../../keys/assess.ts';
import { METRICS } from '../../kernel/tiers.ts';
import type { RagCollection } from '../../rag/collections.projection.ts';
import type { IndexJob } from '../../rag/jobs.projection.ts';
import type { QueryRecord } from '../../rag/queries.projection.ts';
import type { AnalysisRecord } from '../../vision/analyses.projection.ts';
import { SEVERITIES, type Severity } from '../../vision/analysis/types.ts';
import type { TestRun } from '../../vision/test-runs.projection.ts';
import type { GenerationRecord } from '../generations.projection.ts';
import type { ValidationRecord } from '../validations.projection.ts';
import { median, percentile, perDay, rate, sum, tally } from './report-figures.ts';
import type { CollectionSummary, GenerationSummary, ReportMetrics, ValidationSummary, VisualTestSummary } from './report.types.ts';

/**
 * Each section of the project report from the records it is about (pure): gatherReport reads and
 * selects the records, these count them.
 */

export const RECENT_JOBS = 20;
export const TEST_HISTORY = 50;
export const RECENT_VALIDATIONS = 20;

/** What each section reads of its records: gatherReport fetches these fields and no others. */
export type QueryFacts = Pick<QueryRecord, 'collectionName' | 'cached' | 'durationMs' | 'servedAt'>;
export type AnalysisFacts = Pick<AnalysisRecord, 'findings' | 'findingTypes'>;
export type TestRunFacts = Pick<TestRun, 'runId' | 'suite' | 'url' | 'passed' | 'failed' | 'ranAt'>;
export type GenerationFacts = Pick<GenerationRecord, 'testType' | 'cases'>;

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);
const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const newestFirst =
  <T>(at: (item: T) => Date, id: (item: T) => string) =>
  (a: T, b: T): number =>
    at(b).getTime() - at(a).getTime() || byName(id(a), id(b));

export function collectionSummaries(collections: readonly RagCollection[]): CollectionSummary[] {
  return [...collections]
    .sort((a, b) => byName(a.collectionName, b.collectionName))
    .map((c) => ({
      collectionName: c.collectionName,
      projectPath: c.projectPath,
      files: c.files,
      chunks: c.chunks,
      indexedAt: iso(c.indexedAt),
      lastJobStatus: c.lastJobStatus,
    }));
}

export function indexingFigures(jobs: readonly IndexJob[]): ReportMetrics['indexing'] {
  const ended = jobs.filter((j) => (j.status === 'completed' || j.status === 'failed') && j.durationMs !== null);
  const durations = ended.map((j) => j.durationMs!);
  return {
    runs: jobs.length,
    completed: jobs.filter((j) => j.status === 'completed').length,
    failed: jobs.filter((j) => j.status === 'failed').length,
    filesIndexed: sum(jobs.map((j) => j.filesIndexed)),
    totalDurationMs: sum(durations),
    medianDurationMs: median(durations),
    recent: [...jobs]
      .sort(
        newestFirst(
          (j) => j.requestedAt,
          (j) => j.jobId,
        ),
      )
      .slice(0, RECENT_JOBS)
      .map((j) => ({
        jobId: j.jobId,
        collectionName: j.collectionName,
        status: j.status,
        filesIndexed: j.filesIndexed,
        chunks: j.chunks,
        durationMs: j.durationMs,
        finishedAt: iso(j.finishedAt),
      })),
  };
}

export function queryFigures(queries: readonly QueryFacts[]): ReportMetrics['queries'] {
  const cached = queries.filter((q) => q.cached).length;
  const durations = queries.map((q) => q.durationMs);
  const latencyMs =
    queries.length === 0
      ? null
      : { p50: percentile(durations, 50)!, p95: percentile(durations, 95)!, max: durations.reduce((m, d) => Math.max(m, d), -Infinity) };
  return {
    count: queries.length,
    cached,
    cacheHitRate: rate(cached, queries.length),
    latencyMs,
    byCollection: tally(queries, (q) => q.collectionName).map(({ key, count }) => ({ collectionName: key, count })),
    perDay: perDay(queries.map((q) => q.servedAt)),
  };
}

export function visionFigures(captures: number, analyses: readonly AnalysisFacts[]): ReportMetrics['vision'] {
  const bySeverity = Object.fromEntries(SEVERITIES.map((s) => [s, 0])) as Record<Severity, number>;
  for (const a of analyses) for (const s of SEVERITIES) bySeverity[s] += a.findings[s] ?? 0;
  const byType = tally(
    analyses.flatMap((a) => a.findingTypes),
    (t) => t.type,
    (t) => t.count,
  ).map(({ key, count }) => ({ type: key, count }));
  return { captures, analyses: analyses.length, findings: { bySeverity, byType } };
}

export function usageFigures(usage: QuotaReport | undefined, period: string): ReportMetrics['usage'] {
  if (!usage) return null;
  return { period, metrics: METRICS.map((metric) => ({ metric, ...usage[metric] })) };
}

export function visualTestSummary(runs: readonly TestRunFacts[]): VisualTestSummary {
  const history = [...runs]
    .sort(
      newestFirst(
        (r) => r.ranAt,
        (r) => r.runId,
      ),
    )
    .slice(0, TEST_HISTORY)
    .reverse()
    .map((r) => ({ runId: r.runId, suite: r.suite, url: r.url, ranAt: r.ranAt.toISOString(), passed: r.passed, failed: r.failed }));
  const failedRuns = runs.filter((r) => r.failed > 0).length;
  return { runs: runs.length, passedRuns: runs.length - failedRuns, failedRuns, history };
}

export function validationSummary(validations: readonly ValidationRecord[]): ValidationSummary {
  return {
    count: validations.length,
    valid: validations.filter((v) => v.valid === true).length,
    invalid: validations.filter((v) => v.valid === false).length,
    undecided: validations.filter((v) => v.valid === null).length,
    recent: [...validations]
      .sort(
        newestFirst(
          (v) => v.validatedAt,
          (v) => v.validationId,
        ),
      )
      .slice(0, RECENT_VALIDATIONS)
      .map((v) => ({
        validationId: v.validationId,
        component: v.component,
        valid: v.valid,
        confidence: v.confidence,
        checks: { ...v.checks },
        validatedAt: v.validatedAt.toISOString(),
      })),
  };
}

export function generationSummary(generations: readonly GenerationFacts[]): GenerationSummary {
  return {
    count: generations.length,
    cases: sum(generations.map((g) => g.cases)),
    byTestType: tally(generations, (g) => g.testType).map(({ key, count }) => ({ testType: key, count })),
  };
}
