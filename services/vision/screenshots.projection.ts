import type { Db } from 'mongodb';
import { projectionCollection } from '../../events/collections.ts';
import { findProjected, type Projection } from '../../events/projection.ts';
import type { ScreenshotCapturedData, VisionEvent } from './events.ts';

/** A stored capture, as GET /api/glm/screenshots/{id} and the analyses find it. */
export type Screenshot = Omit<ScreenshotCapturedData, 'keyHash'> & { capturedAt: Date };

type ScreenshotDocument = Screenshot & Record<string, unknown>;

export const screenshotsProjection: Projection<ScreenshotDocument, VisionEvent> = {
  name: 'vision-screenshots',
  collection: 'vision_screenshots',
  handles: ['glm.screenshot-captured'],
  documentId: (event) => (event.type === 'glm.screenshot-captured' ? event.data.screenshotId : null),
  evolve(doc, event) {
    if (event.type !== 'glm.screenshot-captured') return doc;
    const { keyHash: _keyHash, ...d } = event.data;
    return { ...d, capturedAt: event.metadata.occurredAt };
  },
  // The retention sweep's (retention-sweep.ts): screenshots older than the retention.
  indexes: [{ key: { capturedAt: 1 }, name: 'by_captured_at' }],
};

export async function getScreenshot(db: Db, screenshotId: string): Promise<Screenshot | null> {
  return findProjected<Screenshot>(await projectionCollection(db, screenshotsProjection.collection), screenshotId);
}
