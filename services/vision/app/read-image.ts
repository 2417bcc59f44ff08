import { notFound, type Caller } from '../../premium/caller.ts';
import type { VisionDeps } from '../engine.ts';
import { getScreenshot } from '../screenshots.projection.ts';

/** GET /api/glm/screenshots/{id}: the PNG, to the customer it belongs to only (others get 404). */
export async function screenshotPng(deps: VisionDeps, caller: Caller, screenshotId: string): Promise<Buffer> {
  const shot = await getScreenshot(deps.db, screenshotId);
  const png = shot && shot.customerId === caller.customerId ? await deps.blobs.getOwned(shot.blobs.png, caller.customerId, 'png') : null;
  if (!png) throw notFound(`screenshot ${screenshotId}`);
  return png;
}

/** GET /api/glm/diffs/{id}: a visual check's diff image, to its customer only. */
export async function diffPng(deps: VisionDeps, caller: Caller, diffId: string): Promise<Buffer> {
  const png = await deps.blobs.getOwned(diffId, caller.customerId, 'diff');
  if (!png) throw notFound(`diff ${diffId}`);
  return png;
}
