import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { newEvent, type DeliveredEvent } from '../../../events/envelope.ts';
import { isPermanent, isTransient } from '../../../events/errors.ts';
import { publishAndApply } from '../../../events/own-events.ts';
import { createAppRuntime } from '../../../app/runtime.ts';
import type { Runtime } from '../../../services/platform/runtime.ts';
import { collectionIdOf, collectionsProjection } from '../../../services/rag/collections.projection.ts';
import type { CollectionConfigured, IndexRequested } from '../../../services/rag/events.ts';
import { indexerHandler } from '../../../services/rag/indexer.consumer.ts';
import { JobStarts } from '../../../services/rag/indexing/job-starts.ts';
import { ragMetrics } from '../../../services/rag/metrics.ts';
import { getJob, jobsProjection } from '../../../services/rag/jobs.projection.ts';
import { PushedSources } from '../../../services/rag/pushed-sources.ts';
import type { IndexHooks, IndexOutcome, IndexWork, Retrieval } from '../../../services/rag/retrieval.ts';
import { testConfig, testLogger } from '../../support/env.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';

/**
 * Poison index jobs end: a job over its time budget, or one that started N times without ending
 * (its process died each time), fails with its reason and is thrown as permanent, which the
 * consumer runner dead-letters at once; a job stopped with the service is not counted as a crash.
 * Real Kafka and MongoDB; the retrieval engine is one whose index never ends by itself (the point
 * is what the handler does with a job that does not end, not how a real one gets there).
 */
describe('the indexer ends poison jobs (integration)', function () {
  this.timeout(60_000);
  let rt: Runtime;
  let indexCalls = 0;
  let onIndex: () => void = () => undefined;
  const neverEnds: Retrieval = {
    countCandidates: async () => 0,
    index: (_work: IndexWork, hooks: IndexHooks = {}) => {
      indexCalls++;
      onIndex();
      return new Promise<IndexOutcome>((_, reject) =>
        hooks.signal?.addEventListener('abort', () => reject(hooks.signal?.reason), { once: true }),
      );
    },
    search: async () => ({ hits: [], cached: false }),
    lookup: async () => ({ definitions: [], mentions: [] }),
    drop: async () => undefined,
    close: async () => undefined,
  };

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    rt = await createAppRuntime(testConfig(await useStack()), testLogger());
  });
  after(async () => {
    await rt?.mongo.db.dropDatabase().catch(() => undefined);
    await rt?.close();
  });

  const handler = (limits: { jobBudgetMs: number; maxStarts: number }) =>
    indexerHandler({
      db: rt.mongo.db,
      publisher: rt.publisher,
      retrieval: neverEnds,
      pushed: new PushedSources(rt.mongo.db),
      log: testLogger(),
      limits,
    });

  async function requested(): Promise<DeliveredEvent<IndexRequested>> {
    const customerId = `cus-${randomUUID()}`;
    const collectionId = collectionIdOf(customerId, 'shop');
    const configured: CollectionConfigured = newEvent('rag.collection-configured', {
      collectionId,
      customerId,
      collectionName: 'shop',
      projectPath: null,
      vectorDB: 'local',
    });
    await publishAndApply(rt.publisher, rt.mongo.db, collectionsProjection, [configured]);
    const event: IndexRequested = newEvent('rag.index-requested', {
      jobId: randomUUID(),
      collectionId,
      customerId,
      collectionName: 'shop',
      source: 'files' as const,
      files: [],
      keyHash: null,
    });
    await publishAndApply(rt.publisher, rt.mongo.db, jobsProjection, [event]);
    return { ...event, position: { topic: 't', partition: 0, offset: '0' } } as DeliveredEvent<IndexRequested>;
  }
  const context = (signal = new AbortController().signal) => ({ heartbeat: async () => undefined, signal });
  const outcome = (p: Promise<void>) =>
    p.then(
      () => undefined,
      (err: unknown) => err as Error,
    );

  it('fails a job that runs past its time budget, with the reason, as permanent (dead-lettered)', async () => {
    const event = await requested();
    const failedBefore = ragMetrics.indexJobs.value({ outcome: 'failed' });
    const err = await outcome(handler({ jobBudgetMs: 300, maxStarts: 3 }).handle([event], context()));
    expect(err).to.be.instanceOf(Error);
    expect(ragMetrics.indexJobs.value({ outcome: 'failed' }), 'svc_rag_index_jobs_total{outcome="failed"}').to.equal(failedBefore + 1);
    expect(isPermanent(err)).to.equal(true);
    const job = await getJob(rt.mongo.db, event.data.jobId);
    expect(job).to.include({ status: 'failed' });
    expect(job?.error).to.match(/ran past its time budget/);
    // Handled again (a redelivery): the job has ended, nothing runs.
    const calls = indexCalls;
    expect(await outcome(handler({ jobBudgetMs: 300, maxStarts: 3 }).handle([event], context()))).to.equal(undefined);
    expect(indexCalls).to.equal(calls);
  });

  it('fails a job whose earlier starts all died mid-job, without running it again', async () => {
    const event = await requested();
    const starts = new JobStarts(rt.mongo.db);
    // Three starts that never ended nor stopped cleanly: the process died each time.
    for (let i = 0; i < 3; i++) await starts.begin(event.data.jobId);
    const calls = indexCalls;
    const err = await outcome(handler({ jobBudgetMs: 60_000, maxStarts: 3 }).handle([event], context()));
    expect(isPermanent(err)).to.equal(true);
    expect(indexCalls).to.equal(calls);
    const job = await getJob(rt.mongo.db, event.data.jobId);
    expect(job).to.include({ status: 'failed' });
    expect(job?.error).to.match(/started 3 times and never finished/);
  });

  it('does not count a stop of the service as a crash', async () => {
    const event = await requested();
    for (let i = 0; i < 4; i++) {
      const stop = new AbortController();
      const running = outcome(handler({ jobBudgetMs: 60_000, maxStarts: 3 }).handle([event], context(stop.signal)));
      // The job is running once the engine is asked to index; then the service stops.
      await new Promise<void>((resolve) => (onIndex = resolve));
      stop.abort(new Error('stopping'));
      expect(isTransient(await running)).to.equal(true);
    }
    expect(await getJob(rt.mongo.db, event.data.jobId)).to.include({ status: 'running', attempt: 4 });
  });
});
