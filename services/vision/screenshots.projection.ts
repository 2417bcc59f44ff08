import type { Db } from 'mongodb';
import { projectionCollection } from '../../events/collections.ts';
import { logProjection } from '../../events/log-projection.ts';
import { findProjected } from '../../events/projection.ts';
import type { ScreenshotCapturedData, VisionEvent } from './events.ts';

/** A stored capture, as GET /api/glm/screenshots/{id} and the analyses find it. */
export type Screenshot = Omit<ScreenshotCapturedData, 'keyHash'> & { capturedAt: Date };

export const screenshotsProjection = logProjection<VisionEvent, 'glm.screenshot-captured', 'keyHash', 'capturedAt'>({
  name: 'vision-screenshots',
  collection: 'vision_screenshots',
  type: 'glm.screenshot-captured',
  id: (d) => d.screenshotId,
  omit: ['keyHash'],
  at: 'capturedAt',
  // The retention sweep's (retention-sweep.ts): screenshots older than the retention.
  indexes: [{ key: { capturedAt: 1 }, name: 'by_captured_at' }],
});

export async function getScreenshot(db: Db, screenshotId: string): Promise<Screenshot | null> {
  return findProjected<Screenshot>(await projectionCollection(db, screenshotsProjection.collection), screenshotId);
}
