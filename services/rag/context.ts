import type { BoundedContext } from '../platform/context.ts';
import { collectionsProjection } from './collections.projection.ts';
import { RAG_EVENTS } from './events.ts';
import { jobsProjection } from './jobs.projection.ts';
import { queriesProjection } from './queries.projection.ts';
import { ragService } from './service.ts';

export const ragContext: BoundedContext = {
  name: 'rag',
  events: RAG_EVENTS,
  projections: [collectionsProjection, jobsProjection, queriesProjection],
  services: [ragService],
};
