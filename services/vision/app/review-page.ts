import { randomBytes } from 'node:crypto';
import type { Caller } from '../../premium/caller.ts';
import type { VisionDeps } from '../engine.ts';
import { type PageImage, renderReviewHtml, reviewPolicy } from '../review/render-review-html.ts';
import { getScreenshot } from '../screenshots.projection.ts';
import { runReview } from './run-review.ts';

/**
 * What one page inlines at most (before base64): past it, the remaining images are named, not
 * embedded, so a suite of many full-page captures cannot make one answer hold hundreds of MB.
 */
export const MAX_INLINE_BYTES = 32 * 1024 * 1024;

export interface ReviewPage {
  html: string;
  /** The page's Content-Security-Policy, for the response header as well as its meta tag. */
  policy: string;
}

/**
 * GET /api/glm/runs/{runId}/report: the run's review page, its images read here from the
 * customer's own store (a screenshot or diff of anyone else's is never read: ids come from the
 * run, and every read is checked against the caller's customer).
 */
export async function reviewPage(deps: VisionDeps, caller: Caller, runId: string): Promise<ReviewPage> {
  const run = await runReview(deps, caller, runId);
  const images = new Map<string, PageImage>();
  let budget = MAX_INLINE_BYTES;
  const keep = (id: string, png: Buffer | null): void => {
    if (!png) images.set(id, { missing: 'deleted' });
    else if (png.length > budget) images.set(id, { missing: 'too-large' });
    else {
      budget -= png.length;
      images.set(id, { png });
    }
  };
  for (const s of run.snapshots) {
    for (const id of [s.baselineId, s.screenshotId]) {
      if (id === null || images.has(id)) continue;
      const shot = await getScreenshot(deps.db, id);
      keep(id, shot && shot.customerId === caller.customerId ? await deps.blobs.getOwned(shot.blobs.png, caller.customerId, 'png') : null);
    }
    if (s.diffId !== null && !images.has(s.diffId)) keep(s.diffId, await deps.blobs.getOwned(s.diffId, caller.customerId, 'diff'));
  }
  const nonce = randomBytes(16).toString('base64');
  return { html: renderReviewHtml(run, images, nonce), policy: reviewPolicy(nonce) };
}
