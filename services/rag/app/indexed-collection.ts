import { notFound, ragError, type Caller } from '../../premium/caller.ts';
import { collectionIdOf, getCollection, type RagCollection } from '../collections.projection.ts';
import { checkServedHere, servedVectorDb } from '../vector-db.ts';
import type { RagDeps } from './deps.ts';

/**
 * The caller's indexed collection: 404 when it is not theirs or not there, 409 when this deployment
 * does not serve its vector store (vector-db.ts) or before its first index.
 */
export async function indexedCollection(
  deps: Pick<RagDeps, 'db' | 'config'>,
  caller: Caller,
  collectionName: string,
): Promise<RagCollection> {
  const collectionId = collectionIdOf(caller.customerId, collectionName);
  const collection = await getCollection(deps.db, collectionId);
  if (!collection) throw notFound(`collection ${collectionName}`);
  checkServedHere(collection, servedVectorDb(deps.config.rag.indexEngine));
  if (collection.indexVersion === 0)
    throw ragError(409, 'NOT_INDEXED', `collection ${collectionName} is not indexed yet: POST /api/rag/index first`);
  return collection;
}
