import type { BoundedContext } from '../platform/context.ts';
import { lazyService } from '../platform/lazy-service.ts';
import { collectionsProjection } from './collections.projection.ts';
import { RAG_EVENTS } from './events.ts';
import { jobsProjection } from './jobs.projection.ts';
import { queriesProjection } from './queries.projection.ts';

/**
 * Code retrieval: collections, index jobs and queries. Its operations are served by the vision-RAG
 * face (services/vision-rag/, /api/rag/*) and the MCP server (rag_* tools); its one service is the
 * indexer on its own, for faces that leave index jobs to it (RAG_RUN_INDEXER=false).
 */
export const ragContext: BoundedContext = {
  name: 'rag',
  events: RAG_EVENTS,
  projections: [collectionsProjection, jobsProjection, queriesProjection],
  services: [lazyService('indexer', async () => (await import('./indexer.service.ts')).indexerService)],
};
