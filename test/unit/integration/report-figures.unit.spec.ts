import { expect } from 'chai';
import { atOrAfter, median, perDay, percentile, rate, tally } from '../../../services/integration/report/report-figures.ts';
import {
  generationSummary,
  indexingFigures,
  queryFigures,
  TEST_HISTORY,
  usageFigures,
  validationSummary,
  visionFigures,
  visualTestSummary,
} from '../../../services/integration/report/report-sections.ts';
import type { ValidationRecord } from '../../../services/integration/validations.projection.ts';
import type { IndexJob } from '../../../services/rag/jobs.projection.ts';

const at = (iso: string): Date => new Date(iso);

describe('project report figures (unit)', () => {
  describe('percentile (nearest rank)', () => {
    it('answers an observed value, whatever the order of the values', () => {
      const values = [40, 10, 30, 20];
      expect(percentile(values, 50)).to.equal(20);
      expect(percentile(values, 75)).to.equal(30);
      expect(percentile(values, 95)).to.equal(40);
      expect(percentile(values, 100)).to.equal(40);
      expect(percentile(values, 0)).to.equal(10);
      expect(values).to.deep.equal([40, 10, 30, 20]);
    });

    it('of 1..100 is the rank itself, of one value that value, of none null', () => {
      const hundred = Array.from({ length: 100 }, (_, i) => 100 - i);
      expect(percentile(hundred, 50)).to.equal(50);
      expect(percentile(hundred, 95)).to.equal(95);
      expect(percentile(hundred, 99.5)).to.equal(100);
      expect(percentile([7], 50)).to.equal(7);
      expect(percentile([7], 95)).to.equal(7);
      expect(percentile([], 50)).to.equal(null);
    });
  });

  it('median: the middle value, the mean of the two middle ones, null of none', () => {
    expect(median([5, 1, 3])).to.equal(3);
    expect(median([4, 1, 3, 2])).to.equal(2.5);
    expect(median([9])).to.equal(9);
    expect(median([])).to.equal(null);
  });

  it('rate: a share, null when there is no whole', () => {
    expect(rate(1, 4)).to.equal(0.25);
    expect(rate(0, 3)).to.equal(0);
    expect(rate(0, 0)).to.equal(null);
  });

  describe('perDay', () => {
    it('counts per UTC day, oldest first, with the quiet days between at 0', () => {
      const days = perDay([
        at('2026-11-03T23:59:59.999Z'),
        at('2026-11-01T00:00:00Z'),
        at('2026-11-01T23:00:00+02:00'),
        at('2026-11-03T00:00:00Z'),
      ]);
      expect(days).to.deep.equal([
        { day: '2026-11-01', count: 2 },
        { day: '2026-11-02', count: 0 },
        { day: '2026-11-03', count: 2 },
      ]);
    });

    it('crosses a month and a year end, and answers nothing for nothing', () => {
      expect(perDay([at('2026-12-31T12:00:00Z'), at('2027-01-01T01:00:00Z')]).map((d) => d.day)).to.deep.equal([
        '2026-12-31',
        '2027-01-01',
      ]);
      expect(perDay([])).to.deep.equal([]);
    });
  });

  it('tally: largest first, ties by key, optional amounts', () => {
    expect(tally(['b', 'a', 'b', 'c', 'a'], (x) => x)).to.deep.equal([
      { key: 'a', count: 2 },
      { key: 'b', count: 2 },
      { key: 'c', count: 1 },
    ]);
    expect(
      tally(
        [
          { k: 'x', n: 3 },
          { k: 'y', n: 5 },
          { k: 'x', n: 4 },
        ],
        (i) => i.k,
        (i) => i.n,
      ),
    ).to.deep.equal([
      { key: 'x', count: 7 },
      { key: 'y', count: 5 },
    ]);
  });

  it('atOrAfter: inclusive of since; everything without one; a missing date is not recent', () => {
    const recent = atOrAfter(at('2026-11-01T00:00:00Z'));
    expect(recent(at('2026-11-01T00:00:00Z'))).to.equal(true);
    expect(recent(at('2026-10-31T23:59:59.999Z'))).to.equal(false);
    expect(recent(null)).to.equal(false);
    expect(atOrAfter(null)(at('1999-01-01T00:00:00Z'))).to.equal(true);
  });
});

describe('project report sections (unit)', () => {
  const job = (jobId: string, status: IndexJob['status'], requestedAt: string, durationMs: number | null, filesIndexed = 0): IndexJob => ({
    jobId,
    collectionId: 'c',
    customerId: 'cu',
    collectionName: 'default',
    source: 'path',
    status,
    attempt: 1,
    filesIndexed,
    filesUnchanged: 0,
    filesSkipped: 0,
    filesRemoved: 0,
    chunks: filesIndexed * 2,
    requestedAt: at(requestedAt),
    startedAt: null,
    finishedAt: status === 'completed' || status === 'failed' ? at(requestedAt) : null,
    durationMs,
    error: null,
  });

  it('indexing: runs by status, files, durations of the runs that ended, newest first', () => {
    const figures = indexingFigures([
      job('j1', 'completed', '2026-11-01T00:00:00Z', 1000, 10),
      job('j2', 'failed', '2026-11-02T00:00:00Z', 200),
      job('j3', 'running', '2026-11-03T00:00:00Z', null),
      job('j4', 'completed', '2026-11-04T00:00:00Z', 3000, 5),
    ]);
    expect(figures).to.include({ runs: 4, completed: 2, failed: 1, filesIndexed: 15, totalDurationMs: 4200, medianDurationMs: 1000 });
    expect(figures.recent.map((j) => j.jobId)).to.deep.equal(['j4', 'j3', 'j2', 'j1']);
    expect(figures.recent[1]).to.include({ status: 'running', durationMs: null, finishedAt: null });
    expect(indexingFigures([])).to.include({ runs: 0, totalDurationMs: 0, medianDurationMs: null });
  });

  it('queries: count, cache hit rate, latency percentiles, by collection and by day', () => {
    const q = (collectionName: string, cached: boolean, durationMs: number, servedAt: string) => ({
      collectionName,
      cached,
      durationMs,
      servedAt: at(servedAt),
    });
    const figures = queryFigures([
      q('web', true, 5, '2026-11-01T10:00:00Z'),
      q('web', false, 50, '2026-11-01T11:00:00Z'),
      q('docs', false, 80, '2026-11-03T10:00:00Z'),
      q('web', true, 3, '2026-11-03T12:00:00Z'),
    ]);
    expect(figures).to.deep.equal({
      count: 4,
      cached: 2,
      cacheHitRate: 0.5,
      latencyMs: { p50: 5, p95: 80, max: 80 },
      byCollection: [
        { collectionName: 'web', count: 3 },
        { collectionName: 'docs', count: 1 },
      ],
      perDay: [
        { day: '2026-11-01', count: 2 },
        { day: '2026-11-02', count: 0 },
        { day: '2026-11-03', count: 2 },
      ],
    });
    expect(queryFigures([])).to.deep.equal({ count: 0, cached: 0, cacheHitRate: null, latencyMs: null, byCollection: [], perDay: [] });
  });

  it('vision: findings summed by severity (every severity present) and by type', () => {
    const figures = visionFigures(7, [
      {
        findings: { minor: 2, moderate: 0, serious: 1, critical: 0 },
        findingTypes: [
          { type: 'overlap', count: 2 },
          { type: 'axe:label', count: 1 },
        ],
      },
      {
        findings: { minor: 1, moderate: 3, serious: 0, critical: 1 },
        findingTypes: [
          { type: 'axe:label', count: 4 },
          { type: 'overlap', count: 1 },
        ],
      },
    ]);
    expect(figures).to.deep.equal({
      captures: 7,
      analyses: 2,
      findings: {
        bySeverity: { minor: 3, moderate: 3, serious: 1, critical: 1 },
        byType: [
          { type: 'axe:label', count: 5 },
          { type: 'overlap', count: 3 },
        ],
      },
    });
    expect(visionFigures(0, []).findings.bySeverity).to.deep.equal({ minor: 0, moderate: 0, serious: 0, critical: 0 });
  });

  it('usage: every metric of the quota report, null for an operator', () => {
    const usage = {
      queries: { used: 3, limit: 100, remaining: 97 },
      filesIndexed: { used: 0, limit: 50, remaining: 50 },
      screenshotsAnalyzed: { used: 9, limit: -1, remaining: -1 },
    };
    expect(usageFigures(usage, '2026-11')).to.deep.equal({
      period: '2026-11',
      metrics: [
        { metric: 'queries', used: 3, limit: 100, remaining: 97 },
        { metric: 'filesIndexed', used: 0, limit: 50, remaining: 50 },
        { metric: 'screenshotsAnalyzed', used: 9, limit: -1, remaining: -1 },
      ],
    });
    expect(usageFigures(undefined, '2026-11')).to.equal(null);
  });

  it('visual tests: pass/fail runs, and the history of the latest runs oldest first', () => {
    const runs = Array.from({ length: TEST_HISTORY + 5 }, (_, i) => ({
      runId: `r${String(i).padStart(3, '0')}`,
      suite: 's',
      url: 'https://a.example/',
      passed: 2,
      failed: i % 3 === 0 ? 1 : 0,
      ranAt: new Date(Date.UTC(2026, 10, 1) + i * 3_600_000),
    })).reverse();
    const summary = visualTestSummary(runs);
    expect(summary).to.include({ runs: 55, failedRuns: 19, passedRuns: 36 });
    expect(summary.history).to.have.length(TEST_HISTORY);
    expect(summary.history[0]!.runId).to.equal('r005');
    expect(summary.history.at(-1)!.runId).to.equal('r054');
    expect(summary.history.map((r) => r.ranAt)).to.deep.equal([...summary.history.map((r) => r.ranAt)].sort());
  });

  it('validations: verdicts counted, newest first', () => {
    const v = (validationId: string, valid: boolean | null, validatedAt: string): ValidationRecord => ({
      validationId,
      customerId: 'cu',
      component: 'C',
      collectionName: null,
      url: null,
      valid,
      confidence: 0.5,
      checks: { passed: 1, failed: 0, unknown: 0 },
      judgedByModel: 0,
      codeEvidence: 1,
      pageEvidence: 0,
      durationMs: 10,
      validatedAt: at(validatedAt),
    });
    const summary = validationSummary([
      v('a', true, '2026-11-01T00:00:00Z'),
      v('b', false, '2026-11-03T00:00:00Z'),
      v('c', null, '2026-11-02T00:00:00Z'),
      v('d', true, '2026-11-04T00:00:00Z'),
    ]);
    expect(summary).to.include({ count: 4, valid: 2, invalid: 1, undecided: 1 });
    expect(summary.recent.map((r) => r.validationId)).to.deep.equal(['d', 'b', 'c', 'a']);
    expect(summary.recent[0]).to.deep.include({
      valid: true,
      validatedAt: '2026-11-04T00:00:00.000Z',
      checks: { passed: 1, failed: 0, unknown: 0 },
    });
  });

  it('generations: count, cases and test types', () => {
    expect(
      generationSummary([
        { testType: 'unit', cases: 4 },
        { testType: 'e2e', cases: 2 },
        { testType: 'unit', cases: 6 },
      ]),
    ).to.deep.equal({
      count: 3,
      cases: 12,
      byTestType: [
        { testType: 'unit', count: 2 },
        { testType: 'e2e', count: 1 },
      ],
    });
  });
});
