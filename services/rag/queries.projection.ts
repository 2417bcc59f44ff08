import { logProjection } from '../../events/log-projection.ts';
import type { QueryServedData, RagEvent } from './events.ts';

/**
 * Every query served, one document each (keyed by the event's query id, so a replay or a redelivery
 * finds it there and leaves it): what the project report counts, times and rates. Summing into
 * buckets would make a redelivered event count twice.
 */
export type QueryRecord = Omit<QueryServedData, 'keyHash'> & { servedAt: Date };

export const queriesProjection = logProjection<RagEvent, 'rag.query-served', 'keyHash', 'servedAt'>({
  name: 'rag-queries',
  collection: 'rag_queries',
  type: 'rag.query-served',
  id: (d) => d.queryId,
  omit: ['keyHash'],
  at: 'servedAt',
  indexes: [{ key: { customerId: 1, servedAt: 1 }, name: 'by_customer_time' }],
});
