import type { ProjectReport } from '../../services/integration/report/report.types.ts';

/** Names a hostile customer could choose: markup, quotes, markdown and table syntax. */
export const HOSTILE = {
  projectName: '<script>alert(1)</script> *Shop* | [x](javascript:alert(2))',
  suite: `checkout "main" it's <b>`,
  url: 'https://shop.example/?q=<img src=x onerror=alert(3)>&a="b"',
  component: 'Add|To`Cart`<Button/>',
  collectionName: 'web_app-1',
} as const;

const day = (n: number): string => new Date(Date.UTC(2026, 10, 1 + n, 9, 30)).toISOString();

/** A report with some of everything, as gatherReport would answer for a busy month. */
export function sampleReport(): ProjectReport {
  return {
    success: true,
    projectName: HOSTILE.projectName,
    collectionName: null,
    generatedAt: '2026-11-30T12:00:00.000Z',
    since: '2026-11-01T00:00:00.000Z',
    collections: [
      {
        collectionName: HOSTILE.collectionName,
        projectPath: '/srv/repos/shop',
        files: 412,
        chunks: 3188,
        indexedAt: day(20),
        lastJobStatus: 'completed',
      },
      { collectionName: 'docs', projectPath: null, files: 37, chunks: 120, indexedAt: null, lastJobStatus: 'failed' },
    ],
    metrics: {
      indexing: {
        runs: 3,
        completed: 2,
        failed: 1,
        filesIndexed: 449,
        totalDurationMs: 95_400,
        medianDurationMs: 31_000,
        recent: [
          { jobId: 'job-3', collectionName: 'docs', status: 'failed', filesIndexed: 0, chunks: 0, durationMs: 1_400, finishedAt: day(21) },
          {
            jobId: 'job-2',
            collectionName: HOSTILE.collectionName,
            status: 'completed',
            filesIndexed: 37,
            chunks: 120,
            durationMs: 31_000,
            finishedAt: day(20),
          },
          {
            jobId: 'job-1',
            collectionName: HOSTILE.collectionName,
            status: 'completed',
            filesIndexed: 412,
            chunks: 3188,
            durationMs: 63_000,
            finishedAt: day(2),
          },
        ],
      },
      queries: {
        count: 58,
        cached: 21,
        cacheHitRate: 21 / 58,
        latencyMs: { p50: 42, p95: 180, max: 912 },
        byCollection: [
          { collectionName: HOSTILE.collectionName, count: 50 },
          { collectionName: 'docs', count: 8 },
        ],
        perDay: Array.from({ length: 12 }, (_, i) => ({ day: day(i).slice(0, 10), count: [3, 7, 0, 0, 12, 5, 1, 9, 4, 0, 6, 11][i]! })),
      },
      vision: {
        captures: 14,
        analyses: 6,
        findings: {
          bySeverity: { minor: 9, moderate: 4, serious: 2, critical: 1 },
          byType: [
            { type: 'axe:color-contrast', count: 7 },
            { type: 'small-tap-target', count: 5 },
            { type: 'overlap', count: 4 },
          ],
        },
      },
      usage: {
        period: '2026-11',
        metrics: [
          { metric: 'queries', used: 58, limit: 1000, remaining: 942 },
          { metric: 'filesIndexed', used: 449, limit: 500, remaining: 51 },
          { metric: 'screenshotsAnalyzed', used: 14, limit: -1, remaining: -1 },
        ],
      },
    },
    visualTests: {
      runs: 4,
      passedRuns: 2,
      failedRuns: 2,
      history: [
        { runId: 'run-1', suite: HOSTILE.suite, url: HOSTILE.url, ranAt: day(3), passed: 5, failed: 0 },
        { runId: 'run-2', suite: HOSTILE.suite, url: HOSTILE.url, ranAt: day(8), passed: 3, failed: 2 },
        { runId: 'run-3', suite: 'home', url: 'https://shop.example/', ranAt: day(9), passed: 4, failed: 1 },
        { runId: 'run-4', suite: HOSTILE.suite, url: HOSTILE.url, ranAt: day(15), passed: 5, failed: 0 },
      ],
    },
    validations: {
      count: 5,
      valid: 3,
      invalid: 1,
      undecided: 1,
      recent: [
        {
          validationId: 'v-5',
          component: HOSTILE.component,
          valid: true,
          confidence: 0.92,
          checks: { passed: 3, failed: 0, unknown: 0 },
          validatedAt: day(22),
        },
        {
          validationId: 'v-4',
          component: 'formatPrice',
          valid: false,
          confidence: 0.8,
          checks: { passed: 1, failed: 1, unknown: 0 },
          validatedAt: day(18),
        },
        {
          validationId: 'v-3',
          component: 'CartDrawer',
          valid: null,
          confidence: 0.4,
          checks: { passed: 2, failed: 0, unknown: 1 },
          validatedAt: day(12),
        },
      ],
    },
    generations: {
      count: 4,
      cases: 31,
      byTestType: [
        { testType: 'unit', count: 3 },
        { testType: 'e2e', count: 1 },
      ],
    },
  };
}

/** A report of a customer who has done nothing yet (with a key whose quotas are all 0 so far). */
export function emptyReport(): ProjectReport {
  return {
    success: true,
    projectName: 'Empty',
    collectionName: 'default',
    generatedAt: '2026-11-30T12:00:00.000Z',
    since: null,
    collections: [],
    metrics: {
      indexing: { runs: 0, completed: 0, failed: 0, filesIndexed: 0, totalDurationMs: 0, medianDurationMs: null, recent: [] },
      queries: { count: 0, cached: 0, cacheHitRate: null, latencyMs: null, byCollection: [], perDay: [] },
      vision: { captures: 0, analyses: 0, findings: { bySeverity: { minor: 0, moderate: 0, serious: 0, critical: 0 }, byType: [] } },
      usage: {
        period: '2026-11',
        metrics: [
          { metric: 'queries', used: 0, limit: 0, remaining: 0 },
          { metric: 'filesIndexed', used: 0, limit: 0, remaining: 0 },
          { metric: 'screenshotsAnalyzed', used: 0, limit: -1, remaining: -1 },
        ],
      },
    },
    visualTests: { runs: 0, passedRuns: 0, failedRuns: 0, history: [] },
    validations: { count: 0, valid: 0, invalid: 0, undecided: 0, recent: [] },
    generations: { count: 0, cases: 0, byTestType: [] },
  };
}
