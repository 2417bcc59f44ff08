import type { Projection } from '../../events/projection.ts';
import type { QueryServedData, RagEvent } from './events.ts';

/**
 * Every query served, one document each (keyed by the event's query id, so a replay or a redelivery
 * writes the same document again): what the project report counts, times and rates. Summing into
 * buckets would make a redelivered event count twice.
 */
export type QueryRecord = Omit<QueryServedData, 'keyHash'> & { servedAt: Date };

type QueryDocument = QueryRecord & Record<string, unknown>;

export const queriesProjection: Projection<QueryDocument, RagEvent> = {
  name: 'rag-queries',
  collection: 'rag_queries',
  handles: ['rag.query-served'],
  documentId: (event) => (event.type === 'rag.query-served' ? event.data.queryId : null),
  evolve(doc, event) {
    if (event.type !== 'rag.query-served') return doc;
    const { keyHash: _keyHash, ...d } = event.data;
    return { ...d, servedAt: event.metadata.occurredAt };
  },
  indexes: [{ key: { customerId: 1, servedAt: 1 }, name: 'by_customer_time' }],
};
