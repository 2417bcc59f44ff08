import type { Db } from 'mongodb';
import { projectionCollection } from '../../events/collections.ts';
import { type Event, newEvent } from '../../events/envelope.ts';
import { applyEvents } from '../../events/projection.ts';
import { collectionIdOf, collectionsProjection } from '../../services/rag/collections.projection.ts';
import type { IndexCompletedData } from '../../services/rag/events.ts';

/**
 * A customer's collection as the collections projection has it after one completed index of one
 * file: what operations that need "an indexed collection" read, without running the indexer.
 */
export async function projectIndexedCollection(
  db: Db,
  o: {
    customerId: string;
    collectionName: string;
    projectPath: string | null;
    file: string;
    topic: string;
    /** The vector store it was set up for (default the embedded index). */
    vectorDB?: string;
  },
): Promise<string> {
  const collectionId = collectionIdOf(o.customerId, o.collectionName);
  const completed: IndexCompletedData = {
    jobId: 'j1',
    collectionId,
    customerId: o.customerId,
    filesIndexed: 1,
    filesUnchanged: 0,
    filesSkipped: 0,
    filesRemoved: 0,
    chunks: 1,
    durationMs: 10,
    manifest: [{ path: o.file, hash: 'h' }],
  };
  const setup: Event[] = [
    newEvent('rag.collection-configured', {
      collectionId,
      customerId: o.customerId,
      collectionName: o.collectionName,
      projectPath: o.projectPath,
      vectorDB: o.vectorDB ?? 'local',
    }),
    newEvent('rag.index-completed', completed),
  ];
  await applyEvents(
    await projectionCollection(db, collectionsProjection.collection),
    collectionsProjection,
    setup.map((e, i) => ({ ...e, position: { topic: o.topic, partition: 0, offset: String(i) } })),
  );
  return collectionId;
}
