import type { Db } from 'mongodb';
import { projectionCollection } from '../../events/collections.ts';
import { findProjected, type Projection } from '../../events/projection.ts';
import { RAG_EVENT_TYPES, type RagEvent } from './events.ts';

/** An indexing job as GET /api/rag/index/{jobId} reports it. */
export interface IndexJob {
  jobId: string;
  collectionId: string;
  customerId: string;
  collectionName: string;
  source: 'path' | 'files';
  status: 'queued' | 'running' | 'completed' | 'failed';
  attempt: number;
  filesIndexed: number;
  filesUnchanged: number;
  filesSkipped: number;
  filesRemoved: number;
  chunks: number;
  requestedAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  durationMs: number | null;
  error: string | null;
}

type JobDocument = IndexJob & Record<string, unknown>;

export const jobsProjection: Projection<JobDocument, RagEvent> = {
  name: 'rag-jobs',
  collection: 'rag_index_jobs',
  handles: RAG_EVENT_TYPES.filter((t) => t !== 'rag.collection-configured' && t !== 'rag.collection-deleted' && t !== 'rag.query-served'),
  documentId: (event) =>
    event.type === 'rag.collection-configured' || event.type === 'rag.collection-deleted' || event.type === 'rag.query-served'
      ? null
      : event.data.jobId,
  evolve(doc, event) {
    switch (event.type) {
      case 'rag.index-requested': {
        const d = event.data;
        return {
          jobId: d.jobId,
          collectionId: d.collectionId,
          customerId: d.customerId,
          collectionName: d.collectionName,
          source: d.source,
          status: 'queued',
          attempt: 0,
          filesIndexed: 0,
          filesUnchanged: 0,
          filesSkipped: 0,
          filesRemoved: 0,
          chunks: 0,
          requestedAt: event.metadata.occurredAt,
          startedAt: null,
          finishedAt: null,
          durationMs: null,
          error: null,
          ...doc,
        };
      }
      case 'rag.index-started':
        // A job that ended stays ended: a late start (a redelivery) must not reopen it.
        if (!doc || doc.status === 'completed' || doc.status === 'failed') return doc;
        return { ...doc, status: 'running', attempt: event.data.attempt, startedAt: doc.startedAt ?? event.metadata.occurredAt };
      case 'rag.index-completed': {
        if (!doc) return null;
        const d = event.data;
        return {
          ...doc,
          status: 'completed',
          filesIndexed: d.filesIndexed,
          filesUnchanged: d.filesUnchanged,
          filesSkipped: d.filesSkipped,
          filesRemoved: d.filesRemoved,
          chunks: d.chunks,
          finishedAt: event.metadata.occurredAt,
          durationMs: d.durationMs,
        };
      }
      case 'rag.index-failed':
        if (!doc) return null;
        return {
          ...doc,
          status: 'failed',
          error: event.data.error,
          finishedAt: event.metadata.occurredAt,
          durationMs: event.data.durationMs,
        };
      case 'rag.collection-configured':
      case 'rag.collection-deleted':
      case 'rag.query-served':
        return doc;
      default: {
        const unhandled: never = event;
        throw new Error(`rag jobs: unhandled ${(unhandled as { type: string }).type}`);
      }
    }
  },
};

export async function getJob(db: Db, jobId: string): Promise<IndexJob | null> {
  return findProjected<IndexJob>(await projectionCollection(db, jobsProjection.collection), jobId);
}
