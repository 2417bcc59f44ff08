import { createHash } from 'node:crypto';
import type { Db } from 'mongodb';
import { projectionCollection } from '../../events/collections.ts';
import { findProjected, type Projection } from '../../events/projection.ts';
import { RAG_EVENT_TYPES, type RagEvent } from './events.ts';

/** A customer's collection: what it indexes, and where its index stands. */
export interface RagCollection {
  collectionId: string;
  customerId: string;
  collectionName: string;
  projectPath: string | null;
  vectorDB: string;
  configuredAt: Date;
  /** Completed index runs: 0 until the first one, when queries start being answered. */
  indexVersion: number;
  indexedAt: Date | null;
  files: number;
  chunks: number;
  lastJobId: string | null;
  lastJobStatus: 'queued' | 'running' | 'completed' | 'failed' | null;
}

type CollectionDocument = RagCollection & Record<string, unknown>;

/** Collections are the customer's: the id is scoped by customer, so another customer's name is another collection. */
export function collectionIdOf(customerId: string, collectionName: string): string {
  return createHash('sha256').update(`${customerId}\u0000${collectionName}`).digest('hex').slice(0, 32);
}

export const collectionsProjection: Projection<CollectionDocument, RagEvent> = {
  name: 'rag-collections',
  collection: 'rag_collections',
  handles: RAG_EVENT_TYPES.filter((t) => t !== 'rag.query-served'),
  documentId: (event) => (event.type === 'rag.query-served' ? null : event.data.collectionId),
  evolve(doc, event) {
    if (event.type === 'rag.collection-configured') {
      const d = event.data;
      return {
        indexVersion: 0,
        indexedAt: null,
        files: 0,
        chunks: 0,
        lastJobId: null,
        lastJobStatus: null,
        ...doc,
        collectionId: d.collectionId,
        customerId: d.customerId,
        collectionName: d.collectionName,
        projectPath: d.projectPath,
        vectorDB: d.vectorDB,
        configuredAt: doc?.configuredAt ?? event.metadata.occurredAt,
      };
    }
    // Deleted: the document goes; setting the name up again starts a new collection.
    if (event.type === 'rag.collection-deleted') return null;
    // Index events of a collection never configured (an operator's CLI run, say) have nothing to update.
    if (!doc) return null;
    switch (event.type) {
      case 'rag.index-requested':
        return { ...doc, lastJobId: event.data.jobId, lastJobStatus: 'queued' };
      case 'rag.index-started':
        return event.data.jobId === doc.lastJobId ? { ...doc, lastJobStatus: 'running' } : doc;
      case 'rag.index-completed': {
        const d = event.data;
        return {
          ...doc,
          indexVersion: doc.indexVersion + 1,
          indexedAt: event.metadata.occurredAt,
          files: d.manifest.length,
          chunks: d.chunks,
          lastJobStatus: d.jobId === doc.lastJobId ? 'completed' : doc.lastJobStatus,
        };
      }
      case 'rag.index-failed':
        return event.data.jobId === doc.lastJobId ? { ...doc, lastJobStatus: 'failed' } : doc;
      case 'rag.query-served':
        return doc;
      default: {
        const unhandled: never = event;
        throw new Error(`rag collections: unhandled ${(unhandled as { type: string }).type}`);
      }
    }
  },
  indexes: [{ key: { customerId: 1 } }],
};

export async function getCollection(db: Db, collectionId: string): Promise<RagCollection | null> {
  return findProjected<RagCollection>(await projectionCollection(db, collectionsProjection.collection), collectionId);
}

/** A customer's collections, by name. */
export async function collectionsOf(db: Db, customerId: string): Promise<RagCollection[]> {
  const docs = await (await projectionCollection(db, collectionsProjection.collection))
    .find({ customerId, _deleted: { $ne: true } })
    .toArray();
  // A name with a leading dot is the platform's own (the shared memory's notes), never the customer's
  // to list, count against the tier's bound, or pick as "your only collection".
  return docs.map(({ _id, _v, _pos, _deleted, ...rest }) => rest as RagCollection).filter((c) => !c.collectionName.startsWith('.'));
}
