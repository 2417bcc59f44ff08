import type { Document } from 'mongodb';
import { projectionCollection } from '../../../events/collections.ts';
import { notFound, ragError, type Caller } from '../../premium/caller.ts';
import { baselinesProjection } from '../baselines.projection.ts';
import type { VisionDeps } from '../engine.ts';
import { getScreenshot, screenshotsProjection } from '../screenshots.projection.ts';

/**
 * DELETE /api/glm/screenshots/{id} and /api/glm/diffs/{id}: how a customer at its storage bound
 * frees space before retention does (app/storage-limit.ts). Another customer's is not found.
 */

export interface Deleted {
  success: true;
  deleted: string;
}

/** A screenshot and what was stored with it; refused (409) while a suite compares with it. */
export async function deleteScreenshot(deps: Pick<VisionDeps, 'db' | 'blobs'>, caller: Caller, screenshotId: string): Promise<Deleted> {
  const shot = await getScreenshot(deps.db, screenshotId);
  if (!shot || shot.customerId !== caller.customerId) throw notFound(`screenshot ${screenshotId}`);
  const baselines = await projectionCollection(deps.db, baselinesProjection.collection);
  const used = await baselines.findOne<{ suite: string; check: string }>(
    { customerId: caller.customerId, screenshotId, _deleted: { $ne: true } } as Document,
    { projection: { suite: 1, check: 1 } },
  );
  if (used) {
    throw ragError(
      409,
      'BASELINE_IN_USE',
      `screenshot ${screenshotId} is the baseline of check "${used.check}" of suite "${used.suite}": accept a newer run of the suite first`,
      { suite: used.suite, check: used.check },
    );
  }
  for (const id of [shot.blobs.png, shot.blobs.dom, shot.blobs.report]) await deps.blobs.delete(id);
  // A tombstone, as a projection's own deletion leaves: the screenshot reads as absent everywhere.
  const screenshots = await projectionCollection(deps.db, screenshotsProjection.collection);
  await screenshots.updateOne({ _id: screenshotId, _deleted: { $ne: true } } as Document, { $set: { _deleted: true } });
  return { success: true, deleted: screenshotId };
}

/** A visual check's diff image. */
export async function deleteDiff(deps: Pick<VisionDeps, 'blobs'>, caller: Caller, diffId: string): Promise<Deleted> {
  if (!(await deps.blobs.deleteOwned(diffId, caller.customerId, 'diff'))) throw notFound(`diff ${diffId}`);
  return { success: true, deleted: diffId };
}
