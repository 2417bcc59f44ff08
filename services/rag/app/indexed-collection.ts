import { notFound, ragError, type Caller } from '../../premium/caller.ts';
import { collectionIdOf, getCollection, type RagCollection } from '../collections.projection.ts';
import type { RagDeps } from './deps.ts';

/** The caller's indexed collection: 404 when it is not theirs or not there, 409 before its first index. */
export async function indexedCollection(deps: Pick<RagDeps, 'db'>, caller: Caller, collectionName: string): Promise<RagCollection> {
  const collectionId = collectionIdOf(caller.customerId, collectionName);
  const collection = await getCollection(deps.db, collectionId);
  if (!collection) throw notFound(`collection ${collectionName}`);
  if (collection.indexVersion === 0)
    throw ragError(409, 'NOT_INDEXED', `collection ${collectionName} is not indexed yet: POST /api/rag/index first`);
  return collection;
}
