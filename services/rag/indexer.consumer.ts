import type { Db } from 'mongodb';
import { eachEventOf, type EventHandler } from '../../events/consumer.ts';
import { derivedEventId, newEvent } from '../../events/envelope.ts';
import { PermanentError, TransientError, errorMessage, isTransient } from '../../events/errors.ts';
import { publishAndApply } from '../../events/own-events.ts';
import type { EventPublisher } from '../../events/publisher.ts';
import { currentPeriod, type UsageIncremented } from '../keys/usage.ts';
import type { Logger } from '../platform/logger.ts';
import { getCollection } from './collections.projection.ts';
import type { IndexCompleted, IndexFailed, IndexRequested, IndexStarted } from './events.ts';
import { JobStarts } from './indexing/job-starts.ts';
import { JobSlots } from './job-slots.ts';
import { ragMetrics } from './metrics.ts';
import { publicJobError } from './indexing/public-error.ts';
import { getJob, jobsProjection } from './jobs.projection.ts';
import type { PushedSources } from './pushed-sources.ts';
import { IndexBudgetError, type Retrieval } from './retrieval.ts';

export interface IndexerDeps {
  db: Db;
  publisher: Pick<EventPublisher, 'publish' | 'publishOrdered'>;
  retrieval: Retrieval;
  pushed: PushedSources;
  log: Logger;
  /** A job's whole time, and how often it may start without ending before it counts as poison. */
  limits: { jobBudgetMs: number; maxStarts: number };
}

/** The job's own reason to fail, kept for the dead-letter topic after the failure is published. */
class PoisonJobError extends PermanentError {
  constructor(message: string) {
    super(message);
    this.name = 'PoisonJobError';
  }
}

/**
 * rag.index-requested -> the work -> rag.index-started, rag.index-completed|failed and the
 * filesIndexed usage. The job runs in this handler, its CPU work on the indexing pool's threads
 * (services/rag/local-retrieval.ts), heartbeating so the consumer keeps its partition; it stops
 * between files when the service stops, and comes back with its event after the restart. A job
 * that ended is not run again. Event ids derive from the job, so a job redone publishes the same events.
 *
 * Poison: a job that runs past its time budget, or that started `maxStarts` times without ending
 * (each start crashed the process), fails with its reason and its event goes to the dead-letter
 * topic: it is never retried forever and does not hold its partition.
 */
export function indexerHandler(deps: IndexerDeps): EventHandler {
  const { db, publisher, retrieval, pushed, log, limits } = deps;
  const starts = new JobStarts(db);
  const slots = new JobSlots(db);
  return eachEventOf<IndexRequested>(['rag.index-requested'], async (event, context) => {
    const d = event.data;
    const job = await getJob(db, d.jobId);
    // Ended before a crash took the slot's release with it: free it now.
    if (job?.status === 'completed' || job?.status === 'failed') return slots.release(d.jobId);
    const cause = { causedBy: event.metadata };
    const began = Date.now();
    const fail = async (reason: string) => {
      const failed: IndexFailed = newEvent(
        'rag.index-failed',
        {
          jobId: d.jobId,
          collectionId: d.collectionId,
          customerId: d.customerId,
          error: reason.slice(0, 500),
          durationMs: Date.now() - began,
        },
        { ...cause, eventId: derivedEventId(`${d.jobId}:failed`) },
      );
      await publishAndApply(publisher, db, jobsProjection, [failed]);
      ragMetrics.indexJobs.inc({ outcome: 'failed' });
      await slots.release(d.jobId);
    };

    const unfinished = await starts.begin(d.jobId);
    if (unfinished >= limits.maxStarts) {
      const reason = `the job started ${unfinished} times and never finished (each time the indexing process stopped dead); it will not be tried again`;
      await fail(reason);
      log.error({ jobId: d.jobId, starts: unfinished }, 'index job is poison: failed and dead-lettered');
      throw new PoisonJobError(reason);
    }
    const attempt = (job?.attempt ?? 0) + 1;
    const started: IndexStarted = newEvent(
      'rag.index-started',
      { jobId: d.jobId, collectionId: d.collectionId, attempt },
      { ...cause, eventId: derivedEventId(`${d.jobId}:started:${attempt}`) },
    );
    await publishAndApply(publisher, db, jobsProjection, [started]);
    const overBudget = AbortSignal.timeout(limits.jobBudgetMs);
    const signal = AbortSignal.any([context.signal, overBudget]);
    try {
      const collection = await getCollection(db, d.collectionId);
      if (!collection) throw new IndexBudgetError(`collection ${d.collectionName} no longer exists`);
      const outcome = await retrieval.index(
        {
          collectionId: d.collectionId,
          tenant: d.customerId,
          mode: d.source === 'files' ? 'pushed' : 'full',
          projectPath: collection.projectPath,
          pushed,
          files: d.files,
        },
        { heartbeat: context.heartbeat, signal },
      );
      if (d.keyHash && outcome.filesIndexed > 0) {
        const usage: UsageIncremented = newEvent(
          'usage.incremented',
          {
            keyHash: d.keyHash,
            metric: 'filesIndexed',
            amount: outcome.filesIndexed,
            period: currentPeriod(event.metadata.occurredAt.getTime()),
          },
          { ...cause, eventId: derivedEventId(`${d.jobId}:usage`) },
        );
        await publisher.publish(usage);
      }
      const completed: IndexCompleted = newEvent(
        'rag.index-completed',
        { jobId: d.jobId, collectionId: d.collectionId, customerId: d.customerId, ...outcome, durationMs: Date.now() - began },
        { ...cause, eventId: derivedEventId(`${d.jobId}:completed`) },
      );
      await publishAndApply(publisher, db, jobsProjection, [completed]);
      ragMetrics.indexJobs.inc({ outcome: 'completed' });
      await slots.release(d.jobId);
      await starts.end(d.jobId);
      log.info(
        { jobId: d.jobId, filesIndexed: outcome.filesIndexed, chunks: outcome.chunks, ms: Date.now() - began },
        'collection indexed',
      );
    } catch (err) {
      if (overBudget.aborted && !context.signal.aborted) {
        const reason = `the job ran past its time budget of ${Math.round(limits.jobBudgetMs / 1000)} s`;
        await fail(reason);
        await starts.end(d.jobId);
        log.warn({ jobId: d.jobId }, 'index job over its budget: failed and dead-lettered');
        throw new PoisonJobError(reason);
      }
      // The service stopping, or an outage: the event comes back and the job carries on; a stop is not a crash.
      if (context.signal.aborted) {
        ragMetrics.indexJobs.inc({ outcome: 'interrupted' });
        await starts.stoppedCleanly(d.jobId).catch(() => undefined);
        throw new TransientError('indexing stopped with the service; the job resumes after the restart', { cause: err });
      }
      if (isTransient(err)) {
        ragMetrics.indexJobs.inc({ outcome: 'interrupted' });
        await starts.stoppedCleanly(d.jobId).catch(() => undefined);
        throw err;
      }
      const budget = err instanceof IndexBudgetError ? err : undefined;
      // Other errors can carry server paths: the customer reads them relative to its folder, or not at all.
      const folder = (await getCollection(db, d.collectionId).catch(() => null))?.projectPath;
      await fail(budget ? budget.message : publicJobError(err, folder ? [folder] : []));
      await starts.end(d.jobId);
      log.warn({ jobId: d.jobId, err: errorMessage(err) }, 'indexing failed');
      if (budget?.poison) throw new PoisonJobError(budget.message);
    }
  });
}
