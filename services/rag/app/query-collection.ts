import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { newEvent } from '../../../events/envelope.ts';
import type { Caller } from '../../premium/caller.ts';
import type { QueryServed } from '../events.ts';
import type { QueryInput } from '../input.ts';
import type { SearchHit } from '../retrieval.ts';
import type { RagDeps } from './deps.ts';
import { indexedCollection } from './indexed-collection.ts';
import { meter } from '../../premium/meter.ts';

export interface QueryResult {
  success: true;
  query: string;
  results: SearchHit[];
  /** Served from the result cache (the index has not changed since the same query). */
  cached: boolean;
}

/**
 * POST /api/rag/query and the `rag_query` tool: the chunks that answer, best first. The answer waits
 * for rag.query-served to be written (what the project report counts), so a query served is a query
 * counted; it is not applied here, since nothing reads it back within the request.
 */
export async function queryCollection(deps: RagDeps, caller: Caller, input: QueryInput, correlationId: string): Promise<QueryResult> {
  const { collectionId } = await indexedCollection(deps, caller, input.collectionName);
  await meter(deps, caller, 'queries', 1, correlationId);
  const started = performance.now();
  const { hits, cached } = await deps.retrieval.search(collectionId, input.query, input.topK, caller.customerId);
  const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
  const served: QueryServed = newEvent(
    'rag.query-served',
    {
      queryId: randomUUID(),
      collectionId,
      customerId: caller.customerId,
      collectionName: input.collectionName,
      keyHash: caller.keyHash,
      results: hits.length,
      cached,
      durationMs,
    },
    { correlationId },
  );
  await deps.publisher.publishOrdered([served]);
  return { success: true, query: input.query, results: hits, cached };
}
