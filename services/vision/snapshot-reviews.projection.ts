import type { Db, Document } from 'mongodb';
import { projectionCollection } from '../../events/collections.ts';
import type { Projection } from '../../events/projection.ts';
import type { VisionEvent } from './events.ts';

/** The latest decision on one snapshot (check@viewport) of one run. */
export interface SnapshotReview {
  customerId: string;
  suite: string;
  runId: string;
  snapshot: string;
  screenshotId: string;
  decision: 'accepted' | 'rejected';
  decidedAt: Date;
}

type ReviewDocument = SnapshotReview & Record<string, unknown>;

/** Per customer, run and snapshot: JSON-encoded so no separator in a name can make two ids meet. */
export const reviewIdOf = (customerId: string, runId: string, snapshot: string): string => JSON.stringify([customerId, runId, snapshot]);

export const snapshotReviewsProjection: Projection<ReviewDocument, VisionEvent> = {
  name: 'vision-snapshot-reviews',
  collection: 'vision_snapshot_reviews',
  handles: ['glm.snapshot-reviewed'],
  documentId: (event) =>
    event.type === 'glm.snapshot-reviewed' ? reviewIdOf(event.data.customerId, event.data.runId, event.data.snapshot) : null,
  evolve(doc, event) {
    if (event.type !== 'glm.snapshot-reviewed') return doc;
    return { ...event.data, decidedAt: event.metadata.occurredAt };
  },
  indexes: [{ key: { customerId: 1, runId: 1 }, name: 'by_run' }],
};

/** Every decision on a run of this customer's, by snapshot. */
export async function reviewsOfRun(db: Db, customerId: string, runId: string): Promise<Map<string, SnapshotReview>> {
  const collection = await projectionCollection(db, snapshotReviewsProjection.collection);
  const docs = await collection
    .find({ customerId, runId, _deleted: { $ne: true } } as Document)
    .project<SnapshotReview>({ _id: 0, _v: 0, _pos: 0, _deleted: 0 })
    .toArray();
  return new Map(docs.map((d) => [d.snapshot, d]));
}
