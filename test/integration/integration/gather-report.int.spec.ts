import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Db } from 'mongodb';
import { projectionCollection } from '../../../events/collections.ts';
import { newEvent, type Event } from '../../../events/envelope.ts';
import { applyEvents, type Projection } from '../../../events/projection.ts';
import { projectReport } from '../../../services/integration/app/project-report.ts';
import type { TestType, TestsGeneratedData, ValidationCompletedData } from '../../../services/integration/events.ts';
import { generationsProjection } from '../../../services/integration/generations.projection.ts';
import { reportInput, type ReportInput } from '../../../services/integration/input.ts';
import { gatherReport, REPORT_RECORDS_MAX } from '../../../services/integration/report/gather-report.ts';
import { validationsProjection } from '../../../services/integration/validations.projection.ts';
import type { QuotaReport } from '../../../services/keys/assess.ts';
import { currentPeriod } from '../../../services/keys/usage.ts';
import { connectMongo, type MongoHandle } from '../../../services/platform/mongo.ts';
import type { Caller } from '../../../services/premium/caller.ts';
import { collectionIdOf, collectionsProjection } from '../../../services/rag/collections.projection.ts';
import type { IndexCompletedData, QueryServedData } from '../../../services/rag/events.ts';
import { jobsProjection } from '../../../services/rag/jobs.projection.ts';
import { queriesProjection } from '../../../services/rag/queries.projection.ts';
import { analysesProjection } from '../../../services/vision/analyses.projection.ts';
import type { Severity } from '../../../services/vision/analysis/types.ts';
import type { AnalysisCompletedData, ScreenshotCapturedData, VisualTestCompletedData } from '../../../services/vision/events.ts';
import { screenshotsProjection } from '../../../services/vision/screenshots.projection.ts';
import { testRunsProjection } from '../../../services/vision/test-runs.projection.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';

/** Every projection the report reads, each applying whatever it handles, as their consumers would. */
const PROJECTIONS: readonly Projection[] = [
  collectionsProjection,
  jobsProjection,
  queriesProjection,
  screenshotsProjection,
  analysesProjection,
  testRunsProjection,
  validationsProjection,
  generationsProjection,
];

const at = (day: number, hour = 10): Date => new Date(Date.UTC(2025, 2, day, hour));
const NOW = at(20);

/** The events of one customer's month: what the report must add up, and nothing else. */
class CustomerEvents {
  readonly customerId = `cust-${randomUUID()}`;
  readonly events: Event[] = [];

  private add<D>(type: string, data: D, occurredAt: Date): void {
    this.events.push(newEvent(type, data, { occurredAt }));
  }

  collection(collectionName: string, day: number): void {
    const collectionId = collectionIdOf(this.customerId, collectionName);
    this.add(
      'rag.collection-configured',
      { collectionId, customerId: this.customerId, collectionName, projectPath: `/srv/${collectionName}`, vectorDB: 'local' },
      at(day, 8),
    );
  }

  /** A job requested at `day` 09:00 that ends (or not) 30 minutes later. */
  job(
    jobId: string,
    collectionName: string,
    day: number,
    end: { completed: { files: number; manifest: number; chunks: number; ms: number } } | { failed: { ms: number } } | 'running',
  ): void {
    const collectionId = collectionIdOf(this.customerId, collectionName);
    const customerId = this.customerId;
    this.add(
      'rag.index-requested',
      { jobId, collectionId, customerId, collectionName, source: 'path', files: [], keyHash: null },
      at(day, 9),
    );
    this.add('rag.index-started', { jobId, collectionId, attempt: 1 }, new Date(at(day, 9).getTime() + 1000));
    const endedAt = new Date(at(day, 9).getTime() + 30 * 60_000);
    if (end === 'running') return;
    if ('failed' in end) {
      this.add('rag.index-failed', { jobId, collectionId, customerId, error: 'boom', durationMs: end.failed.ms }, endedAt);
      return;
    }
    const { files, manifest, chunks, ms } = end.completed;
    const done: IndexCompletedData = {
      jobId,
      collectionId,
      customerId,
      filesIndexed: files,
      filesUnchanged: manifest - files,
      filesSkipped: 0,
      filesRemoved: 0,
      chunks,
      durationMs: ms,
      manifest: Array.from({ length: manifest }, (_, i) => ({ path: `src/f${i}.ts`, hash: `h${i}` })),
    };
    this.add('rag.index-completed', done, endedAt);
  }

  query(collectionName: string, durationMs: number, cached: boolean, servedAt: Date): void {
    const data: QueryServedData = {
      queryId: randomUUID(),
      collectionId: collectionIdOf(this.customerId, collectionName),
      customerId: this.customerId,
      collectionName,
      keyHash: 'k',
      results: 5,
      cached,
      durationMs,
    };
    this.add('rag.query-served', data, servedAt);
  }

  capture(day: number): void {
    const data: ScreenshotCapturedData = {
      screenshotId: randomUUID(),
      customerId: this.customerId,
      keyHash: null,
      url: 'https://shop.example/',
      finalUrl: 'https://shop.example/',
      title: 'Shop',
      width: 1280,
      height: 800,
      fullPage: false,
      selector: null,
      viewport: { width: 1280, height: 800 },
      httpStatus: 200,
      blobs: { png: 'a', dom: 'b', report: 'c' },
      pngBytes: 1000,
      blockedCount: 0,
      source: 'capture',
    };
    this.add('glm.screenshot-captured', data, at(day));
  }

  analysis(day: number, findings: Record<Severity, number>, findingTypes: { type: string; count: number }[]): void {
    const data: AnalysisCompletedData = {
      analysisId: randomUUID(),
      customerId: this.customerId,
      keyHash: null,
      screenshotId: null,
      analysisType: 'comprehensive',
      findings,
      findingTypes,
      checksRun: ['layout'],
      durationMs: 50,
    };
    this.add('glm.analysis-completed', data, at(day));
  }

  testRun(runId: string, suite: string, day: number, passed: number, failed: number): void {
    const data: VisualTestCompletedData = {
      runId,
      customerId: this.customerId,
      keyHash: null,
      suite,
      url: `https://shop.example/${suite}`,
      screenshotId: null,
      passed,
      failed,
      results: [],
      durationMs: 900,
    };
    this.add('glm.visual-test-completed', data, at(day));
  }

  validation(validationId: string, day: number, valid: boolean | null): void {
    const data: ValidationCompletedData = {
      validationId,
      customerId: this.customerId,
      keyHash: null,
      component: `Component${validationId}`,
      collectionName: 'web',
      url: null,
      valid,
      confidence: 0.75,
      checks: { passed: 2, failed: valid === false ? 1 : 0, unknown: valid === null ? 1 : 0 },
      judgedByModel: 0,
      codeEvidence: 2,
      pageEvidence: 0,
      durationMs: 300,
    };
    this.add('integration.validation-completed', data, at(day));
  }

  generation(day: number, testType: TestType, cases: number): void {
    const data: TestsGeneratedData = {
      generationId: randomUUID(),
      customerId: this.customerId,
      keyHash: null,
      component: 'Cart',
      collectionName: 'web',
      url: null,
      testType,
      coverage: 'basic',
      framework: 'mocha',
      files: 1,
      cases,
      durationMs: 20,
    };
    this.add('integration.tests-generated', data, at(day));
  }
}

const USAGE: QuotaReport = {
  queries: { used: 7, limit: 1000, remaining: 993 },
  filesIndexed: { used: 13, limit: 500, remaining: 487 },
  screenshotsAnalyzed: { used: 3, limit: -1, remaining: -1 },
};

describe('the project report from the real projections (integration)', () => {
  let mongo: MongoHandle;
  let db: Db;
  const a = new CustomerEvents();
  const b = new CustomerEvents();
  const callerA: Caller = { customerId: a.customerId, keyHash: 'key-a', usage: USAGE };
  const input = (fields: Partial<ReportInput> = {}): ReportInput => reportInput.parse({ projectName: 'Shop', ...fields });
  const reportOf = (caller: Caller, fields: Partial<ReportInput> = {}) => gatherReport(db, caller, input(fields), NOW);

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    const env = await useStack();
    mongo = await connectMongo(env.MONGODB_URI, `test_${randomUUID().slice(0, 8)}`);
    db = mongo.db;

    a.collection('web', 1);
    a.collection('docs', 1);
    a.job('j1', 'web', 1, { completed: { files: 10, manifest: 10, chunks: 40, ms: 60_000 } });
    a.job('j2', 'docs', 6, { failed: { ms: 500 } });
    a.job('j3', 'web', 7, { completed: { files: 3, manifest: 12, chunks: 46, ms: 2_000 } });
    a.job('j4', 'web', 8, 'running');
    a.query('web', 12, true, at(2));
    a.query('web', 40, false, at(5, 0));
    a.query('web', 7, true, at(5, 23));
    a.query('docs', 30, false, at(6));
    a.query('web', 100, false, at(7));
    a.query('web', 25, false, at(9));
    a.query('docs', 9, true, at(9, 12));
    a.capture(2);
    a.capture(6);
    a.capture(8);
    a.analysis(2, { minor: 5, moderate: 0, serious: 1, critical: 0 }, [
      { type: 'overlap', count: 4 },
      { type: 'axe:label', count: 2 },
    ]);
    a.analysis(6, { minor: 1, moderate: 2, serious: 0, critical: 1 }, [
      { type: 'axe:label', count: 3 },
      { type: 'small-tap-target', count: 1 },
    ]);
    // Published out of order: the history is ordered by when each run ran, not by arrival.
    a.testRun('r4', 'checkout', 9, 3, 0);
    a.testRun('r1', 'checkout', 1, 3, 0);
    a.testRun('r3', 'home', 7, 4, 0);
    a.testRun('r2', 'checkout', 6, 2, 1);
    a.validation('1', 2, true);
    a.validation('2', 6, false);
    a.validation('3', 7, null);
    a.validation('4', 8, true);
    a.generation(3, 'unit', 5);
    a.generation(6, 'unit', 4);
    a.generation(8, 'e2e', 2);

    // Another customer with a collection of the same name and busier figures: none may leak into A's.
    b.collection('web', 1);
    b.job('jb', 'web', 6, { completed: { files: 99, manifest: 99, chunks: 999, ms: 9_999 } });
    for (let i = 0; i < 3; i++) b.query('web', 5_000, true, at(6));
    b.capture(6);
    b.analysis(6, { minor: 0, moderate: 0, serious: 0, critical: 50 }, [{ type: 'b-only', count: 50 }]);
    b.testRun('rb', 'checkout', 6, 0, 9);
    b.validation('b1', 6, false);
    b.generation(6, 'visual', 77);

    // Interleaved as the log would hold them, every event at its own offset.
    const all = [...a.events, ...b.events].map((e, i) => ({ ...e, position: { topic: 'report-test', partition: 0, offset: String(i) } }));
    for (const projection of PROJECTIONS) await applyEvents(await projectionCollection(db, projection.collection), projection, all);
  });

  after(async () => {
    await db?.dropDatabase().catch(() => undefined);
    await mongo?.client.close();
  });

  it('adds up everything the customer did', async () => {
    const report = await reportOf(callerA);
    expect(report).to.include({ success: true, projectName: 'Shop', collectionName: null, since: null, generatedAt: NOW.toISOString() });
    expect(report.collections).to.deep.equal([
      { collectionName: 'docs', projectPath: '/srv/docs', files: 0, chunks: 0, indexedAt: null, lastJobStatus: 'failed' },
      {
        collectionName: 'web',
        projectPath: '/srv/web',
        files: 12,
        chunks: 46,
        indexedAt: new Date(at(7, 9).getTime() + 30 * 60_000).toISOString(),
        lastJobStatus: 'running',
      },
    ]);
    const metrics = report.metrics!;
    expect(metrics.indexing).to.deep.include({
      runs: 4,
      completed: 2,
      failed: 1,
      filesIndexed: 13,
      totalDurationMs: 62_500,
      medianDurationMs: 2_000,
    });
    expect(metrics.indexing.recent.map((j) => [j.jobId, j.status, j.durationMs])).to.deep.equal([
      ['j4', 'running', null],
      ['j3', 'completed', 2_000],
      ['j2', 'failed', 500],
      ['j1', 'completed', 60_000],
    ]);
    // Latencies sorted: 7 9 12 25 30 40 100; nearest rank: p50 the 4th, p95 the 7th.
    expect(metrics.queries).to.deep.equal({
      count: 7,
      cached: 3,
      cacheHitRate: 3 / 7,
      latencyMs: { p50: 25, p95: 100, max: 100 },
      byCollection: [
        { collectionName: 'web', count: 5 },
        { collectionName: 'docs', count: 2 },
      ],
      perDay: [
        { day: '2025-03-02', count: 1 },
        { day: '2025-03-03', count: 0 },
        { day: '2025-03-04', count: 0 },
        { day: '2025-03-05', count: 2 },
        { day: '2025-03-06', count: 1 },
        { day: '2025-03-07', count: 1 },
        { day: '2025-03-08', count: 0 },
        { day: '2025-03-09', count: 2 },
      ],
    });
    expect(metrics.vision).to.deep.equal({
      captures: 3,
      analyses: 2,
      findings: {
        bySeverity: { minor: 6, moderate: 2, serious: 1, critical: 1 },
        byType: [
          { type: 'axe:label', count: 5 },
          { type: 'overlap', count: 4 },
          { type: 'small-tap-target', count: 1 },
        ],
      },
    });
    expect(metrics.usage).to.deep.equal({
      period: currentPeriod(NOW.getTime()),
      metrics: [
        { metric: 'queries', used: 7, limit: 1000, remaining: 993 },
        { metric: 'filesIndexed', used: 13, limit: 500, remaining: 487 },
        { metric: 'screenshotsAnalyzed', used: 3, limit: -1, remaining: -1 },
      ],
    });
    expect(report.visualTests).to.include({ runs: 4, passedRuns: 3, failedRuns: 1 });
    expect(report.visualTests.history).to.deep.equal([
      { runId: 'r1', suite: 'checkout', url: 'https://shop.example/checkout', ranAt: at(1).toISOString(), passed: 3, failed: 0 },
      { runId: 'r2', suite: 'checkout', url: 'https://shop.example/checkout', ranAt: at(6).toISOString(), passed: 2, failed: 1 },
      { runId: 'r3', suite: 'home', url: 'https://shop.example/home', ranAt: at(7).toISOString(), passed: 4, failed: 0 },
      { runId: 'r4', suite: 'checkout', url: 'https://shop.example/checkout', ranAt: at(9).toISOString(), passed: 3, failed: 0 },
    ]);
    expect(report.validations).to.deep.include({ count: 4, valid: 2, invalid: 1, undecided: 1 });
    expect(report.validations.recent.map((v) => [v.validationId, v.valid])).to.deep.equal([
      ['4', true],
      ['3', null],
      ['2', false],
      ['1', true],
    ]);
    expect(report.validations.recent[1]).to.deep.include({
      component: 'Component3',
      confidence: 0.75,
      checks: { passed: 2, failed: 0, unknown: 1 },
      validatedAt: at(7).toISOString(),
    });
    expect(report.generations).to.deep.equal({
      count: 3,
      cases: 11,
      byTestType: [
        { testType: 'unit', count: 2 },
        { testType: 'e2e', count: 1 },
      ],
    });
  });

  it('counts only what happened at or after since (a job by when it was requested)', async () => {
    const report = await reportOf(callerA, { since: '2025-03-05T00:00:00Z' });
    expect(report.since).to.equal('2025-03-05T00:00:00.000Z');
    expect(report.collections.map((c) => c.collectionName)).to.deep.equal(['docs', 'web']);
    const metrics = report.metrics!;
    expect(metrics.indexing).to.deep.include({
      runs: 3,
      completed: 1,
      failed: 1,
      filesIndexed: 3,
      totalDurationMs: 2_500,
      medianDurationMs: 1_250,
    });
    // 7 9 25 30 40 100: p50 the 3rd, p95 the 6th.
    expect(metrics.queries).to.deep.include({ count: 6, cached: 2, cacheHitRate: 2 / 6, latencyMs: { p50: 25, p95: 100, max: 100 } });
    expect(metrics.queries.perDay[0]).to.deep.equal({ day: '2025-03-05', count: 2 });
    expect(metrics.vision).to.deep.include({ captures: 2, analyses: 1 });
    expect(metrics.vision.findings.bySeverity).to.deep.equal({ minor: 1, moderate: 2, serious: 0, critical: 1 });
    expect(report.visualTests.history.map((r) => r.runId)).to.deep.equal(['r2', 'r3', 'r4']);
    expect(report.visualTests).to.include({ runs: 3, passedRuns: 2, failedRuns: 1 });
    expect(report.validations).to.deep.include({ count: 3, valid: 1, invalid: 1, undecided: 1 });
    expect(report.generations).to.deep.include({ count: 2, cases: 6 });

    const boundary = await reportOf(callerA, { since: '2025-03-05T01:00:00+01:00' });
    expect(boundary.metrics!.queries.count, 'a query exactly at since counts').to.equal(6);
  });

  it('narrows collections, indexing and queries (only those) to one collection', async () => {
    const report = await reportOf(callerA, { collectionName: 'web' });
    expect(report.collectionName).to.equal('web');
    expect(report.collections.map((c) => c.collectionName)).to.deep.equal(['web']);
    const metrics = report.metrics!;
    expect(metrics.indexing.recent.map((j) => j.jobId)).to.deep.equal(['j4', 'j3', 'j1']);
    expect(metrics.indexing).to.deep.include({ runs: 3, completed: 2, failed: 0, filesIndexed: 13 });
    expect(metrics.queries).to.deep.include({ count: 5, cached: 2, byCollection: [{ collectionName: 'web', count: 5 }] });
    expect(metrics.vision.captures).to.equal(3);
    expect(report.visualTests.runs).to.equal(4);
    expect(report.validations.count).to.equal(4);

    const unknown = await reportOf(callerA, { collectionName: 'nope' });
    expect(unknown.collections).to.deep.equal([]);
    expect(unknown.metrics!.queries.count).to.equal(0);
  });

  it("never shows another customer's figures, and leaves metrics out when asked", async () => {
    const report = await reportOf({ customerId: b.customerId, keyHash: null }, { includeMetrics: true });
    expect(report.collections).to.have.length(1);
    expect(report.collections[0]).to.include({ collectionName: 'web', files: 99, chunks: 999 });
    expect(report.metrics!.queries).to.deep.include({ count: 3, cached: 3 });
    expect(report.metrics!.vision.findings.bySeverity).to.deep.equal({ minor: 0, moderate: 0, serious: 0, critical: 50 });
    expect(report.metrics!.usage, 'an operator is not metered').to.equal(null);
    expect(report.visualTests.history.map((r) => r.runId)).to.deep.equal(['rb']);
    expect(report.generations.byTestType).to.deep.equal([{ testType: 'visual', count: 1 }]);

    const stranger = await reportOf({ customerId: `cust-${randomUUID()}`, keyHash: null });
    expect(stranger.collections).to.deep.equal([]);
    expect(stranger.metrics!.queries).to.deep.include({ count: 0, cacheHitRate: null, latencyMs: null, perDay: [] });
    expect(stranger.visualTests.runs + stranger.validations.count + stranger.generations.count).to.equal(0);

    const withoutMetrics = await reportOf(callerA, { includeMetrics: false });
    expect(withoutMetrics).not.to.have.property('metrics');
    expect(withoutMetrics.visualTests.runs).to.equal(4);
  });

  it("reads at most REPORT_RECORDS_MAX of a customer's records of a kind, the newest", async () => {
    const heavy = `cust-${randomUUID()}`;
    const docs = Array.from({ length: REPORT_RECORDS_MAX + 7 }, (_, i) => ({
      _id: `${heavy}-${i}`,
      customerId: heavy,
      testType: i >= 7 ? 'unit' : 'e2e',
      cases: 1,
      generatedAt: new Date(Date.UTC(2025, 0, 1) + i * 60_000),
    }));
    await (await projectionCollection(db, generationsProjection.collection)).insertMany(docs as never[]);
    const report = await gatherReport(db, { customerId: heavy, keyHash: null }, reportInput.parse({ projectName: 'heavy' }), NOW);
    expect(report.generations.count).to.equal(REPORT_RECORDS_MAX);
    // The 7 oldest (the only e2e ones) are the ones left out.
    expect(report.generations.byTestType).to.deep.equal([{ testType: 'unit', count: REPORT_RECORDS_MAX }]);
  });

  it('answers json, markdown and html through the operation', async () => {
    const json = await projectReport({ db }, callerA, input({ projectName: '<b>Shop</b>' }));
    expect(json.format).to.equal('json');
    expect(json.body).to.have.nested.property('metrics.queries.count', 7);
    const markdown = await projectReport({ db }, callerA, input({ format: 'markdown' }));
    if (markdown.format !== 'markdown') throw new Error('expected markdown');
    expect(markdown.contentType).to.equal('text/markdown; charset=utf-8');
    expect(markdown.body).to.include('# Project report: Shop').and.include('Queries: 7, of which 3 answered from the cache (42.9%)');
    const html = await projectReport({ db }, callerA, input({ projectName: '<b>Shop</b>', format: 'html' }));
    if (html.format !== 'html') throw new Error('expected html');
    expect(html.contentType).to.equal('text/html; charset=utf-8');
    expect(html.body).to.include('<h1>Project report: &lt;b&gt;Shop&lt;/b&gt;</h1>').and.include('p50 25 ms, p95 100 ms, max 100 ms');
  });
});
