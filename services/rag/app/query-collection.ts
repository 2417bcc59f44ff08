import { notFound, ragError, type Caller } from '../caller.ts';
import { collectionIdOf, getCollection } from '../collections.projection.ts';
import type { QueryInput } from '../input.ts';
import type { SearchHit } from '../retrieval.ts';
import type { RagDeps } from './deps.ts';
import { meter } from './meter.ts';

export interface QueryResult {
  success: true;
  query: string;
  results: SearchHit[];
  /** Served from the result cache (the index has not changed since the same query). */
  cached: boolean;
}

/** POST /api/rag/query and the `rag_query` tool: the chunks that answer, best first. */
export async function queryCollection(deps: RagDeps, caller: Caller, input: QueryInput, correlationId: string): Promise<QueryResult> {
  const collectionId = collectionIdOf(caller.customerId, input.collectionName);
  const collection = await getCollection(deps.db, collectionId);
  if (!collection) throw notFound(`collection ${input.collectionName}`);
  if (collection.indexVersion === 0) throw ragError(409, 'NOT_INDEXED', `collection ${input.collectionName} is not indexed yet: POST /api/rag/index first`);
  await meter(deps, caller, 'queries', 1, correlationId);
  const { hits, cached } = await deps.retrieval.search(collectionId, input.query, input.topK);
  return { success: true, query: input.query, results: hits, cached };
}
