import type { Db } from 'mongodb';
import { eachEventOf, type EventHandler } from '../../events/consumer.ts';
import { derivedEventId, newEvent } from '../../events/envelope.ts';
import { TransientError, errorMessage, isTransient } from '../../events/errors.ts';
import { publishAndApply } from '../../events/own-events.ts';
import type { EventPublisher } from '../../events/publisher.ts';
import { currentPeriod, type UsageIncremented } from '../keys/usage.ts';
import type { Logger } from '../platform/logger.ts';
import { getCollection } from './collections.projection.ts';
import type { IndexCompleted, IndexFailed, IndexRequested, IndexStarted } from './events.ts';
import { getJob, jobsProjection } from './jobs.projection.ts';
import type { PushedSources } from './pushed-sources.ts';
import type { Retrieval } from './retrieval.ts';

export interface IndexerDeps {
  db: Db;
  publisher: Pick<EventPublisher, 'publish' | 'publishOrdered'>;
  retrieval: Retrieval;
  pushed: PushedSources;
  log: Logger;
}

/**
 * rag.index-requested -> the work -> rag.index-started, rag.index-completed|failed and the
 * filesIndexed usage. The job runs inline, heartbeating so the consumer keeps its partition; it
 * stops between files when the service stops. A job cut short by a crash or a stop comes back with
 * its event and carries on (files already indexed are unchanged by then, so cheap); a job that
 * ended is not run again. Event ids derive from the job, so a job redone publishes the same events.
 */
export function indexerHandler(deps: IndexerDeps): EventHandler {
  const { db, publisher, retrieval, pushed, log } = deps;
  return eachEventOf<IndexRequested>(['rag.index-requested'], async (event, context) => {
    const d = event.data;
    const job = await getJob(db, d.jobId);
    if (job?.status === 'completed' || job?.status === 'failed') return;
    const attempt = (job?.attempt ?? 0) + 1;
    const cause = { causedBy: event.metadata };
    const started: IndexStarted = newEvent('rag.index-started', { jobId: d.jobId, collectionId: d.collectionId, attempt }, { ...cause, eventId: derivedEventId(`${d.jobId}:started:${attempt}`) });
    await publishAndApply(publisher, db, jobsProjection, [started]);
    const began = Date.now();
    try {
      const collection = await getCollection(db, d.collectionId);
      if (!collection) throw new Error(`collection ${d.collectionName} no longer exists`);
      const outcome = await retrieval.index(
        { collectionId: d.collectionId, mode: d.source === 'files' ? 'pushed' : 'full', projectPath: collection.projectPath, pushed, files: d.files },
        { heartbeat: context.heartbeat, signal: context.signal },
      );
      if (d.keyHash && outcome.filesIndexed > 0) {
        const usage: UsageIncremented = newEvent(
          'usage.incremented',
          { keyHash: d.keyHash, metric: 'filesIndexed', amount: outcome.filesIndexed, period: currentPeriod(event.metadata.occurredAt.getTime()) },
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
      log.info({ jobId: d.jobId, filesIndexed: outcome.filesIndexed, chunks: outcome.chunks, ms: Date.now() - began }, 'collection indexed');
    } catch (err) {
      // An outage, or the service stopping: the event comes back and the job carries on.
      if (context.signal.aborted) throw new TransientError('indexing stopped with the service; the job resumes after the restart', { cause: err });
      if (isTransient(err)) throw err;
      const failed: IndexFailed = newEvent(
        'rag.index-failed',
        { jobId: d.jobId, collectionId: d.collectionId, customerId: d.customerId, error: errorMessage(err).slice(0, 500), durationMs: Date.now() - began },
        { ...cause, eventId: derivedEventId(`${d.jobId}:failed`) },
      );
      await publishAndApply(publisher, db, jobsProjection, [failed]);
      log.warn({ jobId: d.jobId, err: errorMessage(err) }, 'indexing failed');
    }
  });
}
