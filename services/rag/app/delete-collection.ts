import { newEvent } from '../../../events/envelope.ts';
import { publishAndApply } from '../../../events/own-events.ts';
import { actedBy, notFound, ragError, type Caller } from '../../premium/caller.ts';
import { collectionIdOf, collectionsProjection, getCollection } from '../collections.projection.ts';
import type { CollectionDeleted } from '../events.ts';
import type { RagDeps } from './deps.ts';

export interface DeleteResult {
  success: true;
  collectionName: string;
  deleted: true;
}

/**
 * DELETE /api/rag/collections/{collectionName}: the caller's collection is gone, with its index and
 * the files pushed for it; the name can be set up again as a new collection. The project folder is
 * the customer's and is never touched. While an index job of it is queued or running, 409: the job
 * would write the index back.
 *
 * The event comes first: once it is in the log the collection is gone for every reader (the
 * projection is applied here, the other processes follow it), so a failure after it leaves only
 * files no one can reach, which the next delete (or setting the name up and deleting again) removes.
 */
export async function deleteCollection(
  deps: RagDeps,
  caller: Caller,
  collectionName: string,
  correlationId: string,
): Promise<DeleteResult> {
  const collectionId = collectionIdOf(caller.customerId, collectionName);
  const collection = await getCollection(deps.db, collectionId);
  // Another customer's name is another id: it reads as absent, as everywhere.
  if (!collection) throw notFound(`collection ${collectionName}`);
  if (collection.lastJobStatus === 'queued' || collection.lastJobStatus === 'running') {
    throw ragError(
      409,
      'INDEX_JOB_RUNNING',
      `an index job of ${collectionName} is ${collection.lastJobStatus}; delete it once the job has ended`,
      {
        jobId: collection.lastJobId,
      },
    );
  }
  const event: CollectionDeleted = newEvent(
    'rag.collection-deleted',
    { collectionId, customerId: caller.customerId, collectionName, ...actedBy(caller) },
    { correlationId },
  );
  await publishAndApply(deps.publisher, deps.db, collectionsProjection, [event]);
  await deps.retrieval.drop(collectionId);
  await deps.pushed.removeCollection(collectionId);
  return { success: true, collectionName, deleted: true };
}
