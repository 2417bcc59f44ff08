import type { z } from 'zod';
import { newEvent } from '../../../events/envelope.ts';
import { publishAndApply } from '../../../events/own-events.ts';
import { notFound, ragError, type Caller } from '../../premium/caller.ts';
import type { reviewAnswer } from '../review-schemas.ts';
import { baselinesProjection, getBaseline } from '../baselines.projection.ts';
import type { VisionDeps } from '../engine.ts';
import type { BaselineAccepted, SnapshotReviewed } from '../events.ts';
import { reviewsOfRun, snapshotReviewsProjection } from '../snapshot-reviews.projection.ts';
import { latestRun } from '../test-runs.projection.ts';
import { ownRun } from './run-review.ts';

export type ReviewAnswer = z.infer<typeof reviewAnswer>;
export type Decision = ReviewAnswer['decision'];

/**
 * POST /api/glm/runs/{runId}/snapshots/{snapshot}/accept and /reject, and `glm_review`: the
 * decision on one visual check of a run. Accepting makes its capture the baseline of that
 * check@viewport (as the suite-level accept does for all of them); rejecting records the decision
 * and leaves the baseline. Only the suite's latest run can be decided on (409 RUN_SUPERSEDED): a
 * later run compared with whatever baseline was current, and accepting an older capture over it
 * would silently undo what that run showed. The same decision again publishes nothing; a reject
 * after an accept is 409 ALREADY_ACCEPTED (the baseline has moved: run the suite again instead).
 */
export async function reviewSnapshot(
  deps: VisionDeps,
  caller: Caller,
  runId: string,
  snapshot: string,
  decision: Decision,
  correlationId: string,
): Promise<ReviewAnswer> {
  const run = await ownRun(deps, caller, runId);
  const result = run.results.find((r) => r.name === snapshot && r.kind === 'visual' && r.screenshotId !== null);
  if (!result?.screenshotId) throw notFound(`snapshot ${snapshot} of run ${runId}`);
  const screenshotId = result.screenshotId;
  const latest = await latestRun(deps.db, caller.customerId, run.suite);
  if (latest?.runId !== run.runId) {
    throw ragError(409, 'RUN_SUPERSEDED', `run ${runId} is not the latest of suite ${run.suite}: decide on its latest run`, {
      latestRunId: latest?.runId ?? null,
    });
  }
  const [previous, baseline] = await Promise.all([
    reviewsOfRun(deps.db, caller.customerId, runId).then((m) => m.get(snapshot)),
    getBaseline(deps.db, caller.customerId, run.suite, snapshot),
  ]);
  const answer = (changed: boolean, baselineId: string | null): ReviewAnswer => ({
    success: true,
    runId,
    suite: run.suite,
    snapshot,
    decision,
    screenshotId,
    baselineId,
    changed,
  });
  const baselineNow = baseline?.screenshotId ?? null;
  if (previous?.decision === decision && (decision === 'rejected' || baselineNow === screenshotId)) return answer(false, baselineNow);
  if (decision === 'rejected' && previous?.decision === 'accepted') {
    throw ragError(409, 'ALREADY_ACCEPTED', `snapshot ${snapshot} of run ${runId} was accepted: its capture is the baseline now`);
  }
  const reviewed: SnapshotReviewed = newEvent(
    'glm.snapshot-reviewed',
    { customerId: caller.customerId, suite: run.suite, runId, snapshot, screenshotId, decision },
    { correlationId },
  );
  if (decision === 'accepted') {
    const accepted: BaselineAccepted = newEvent(
      'glm.baseline-accepted',
      { customerId: caller.customerId, suite: run.suite, check: snapshot, screenshotId, reason: 'accepted' },
      { correlationId },
    );
    // The baseline first: a crash between the two leaves the baseline moved and the decision to redo, never the reverse.
    await publishAndApply(deps.publisher, deps.db, baselinesProjection, [accepted]);
  }
  await publishAndApply(deps.publisher, deps.db, snapshotReviewsProjection, [reviewed]);
  return answer(true, decision === 'accepted' ? screenshotId : baselineNow);
}
