import type { Severity } from '../../vision/analysis/types.ts';

/**
 * POST /api/integration/report's answer (format json), and what the markdown and html renderings
 * show. Every figure is computed from the projections of the caller's events (rag.*, glm.*,
 * integration.*) at or after `since`; `usage` is the key's quota as the gate reported it.
 */
export interface ProjectReport {
  success: true;
  projectName: string;
  /** The collection the retrieval figures cover; null: all the caller's collections. */
  collectionName: string | null;
  generatedAt: string;
  since: string | null;
  collections: CollectionSummary[];
  /** Left out when includeMetrics is false. */
  metrics?: ReportMetrics;
  visualTests: VisualTestSummary;
  validations: ValidationSummary;
  generations: GenerationSummary;
}

export interface CollectionSummary {
  collectionName: string;
  projectPath: string | null;
  files: number;
  chunks: number;
  indexedAt: string | null;
  lastJobStatus: string | null;
}

export interface ReportMetrics {
  indexing: {
    runs: number;
    completed: number;
    failed: number;
    filesIndexed: number;
    /** Sum of the durations of the runs that ended. */
    totalDurationMs: number;
    medianDurationMs: number | null;
    /** Newest first, at most 20. */
    recent: Array<{
      jobId: string;
      collectionName: string;
      status: string;
      filesIndexed: number;
      chunks: number;
      durationMs: number | null;
      finishedAt: string | null;
    }>;
  };
  queries: {
    count: number;
    cached: number;
    /** cached / count; null when there were no queries. */
    cacheHitRate: number | null;
    /** Of the operation (search), not of HTTP; null when there were no queries. */
    latencyMs: { p50: number; p95: number; max: number } | null;
    byCollection: Array<{ collectionName: string; count: number }>;
    /** UTC days, oldest first, from the first query's day to the last one's; quiet days in between at 0. */
    perDay: Array<{ day: string; count: number }>;
  };
  vision: {
    captures: number;
    analyses: number;
    findings: { bySeverity: Record<Severity, number>; byType: Array<{ type: string; count: number }> };
  };
  /** The key's quotas this period, as the gate saw them on this request; null for an operator. */
  usage: { period: string | null; metrics: Array<{ metric: string; used: number; limit: number; remaining: number }> } | null;
}

export interface VisualTestSummary {
  runs: number;
  passedRuns: number;
  failedRuns: number;
  /** Oldest first, at most 50: the pass/fail history. */
  history: Array<{ runId: string; suite: string; url: string; ranAt: string; passed: number; failed: number }>;
}

export interface ValidationSummary {
  count: number;
  valid: number;
  invalid: number;
  undecided: number;
  /** Newest first, at most 20. */
  recent: Array<{
    validationId: string;
    component: string;
    valid: boolean | null;
    confidence: number;
    checks: { passed: number; failed: number; unknown: number };
    validatedAt: string;
  }>;
}

export interface GenerationSummary {
  count: number;
  cases: number;
  byTestType: Array<{ testType: string; count: number }>;
}
