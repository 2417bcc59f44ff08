import { newEvent } from '../../../events/envelope.ts';
import { publishAndApply } from '../../../events/own-events.ts';
import { notFound, ragError, type Caller } from '../../premium/caller.ts';
import { baselinesProjection } from '../baselines.projection.ts';
import type { VisionDeps } from '../engine.ts';
import type { BaselineAccepted } from '../events.ts';
import { latestRun } from '../test-runs.projection.ts';

export interface AcceptAnswer {
  success: true;
  suite: string;
  runId: string;
  accepted: { check: string; screenshotId: string }[];
}

/**
 * POST /api/glm/baselines/{suite}/accept: the captures of the suite's latest run become the
 * baselines of its visual checks (after a change the team meant to make).
 */
export async function acceptBaselines(deps: VisionDeps, caller: Caller, suite: string, correlationId: string): Promise<AcceptAnswer> {
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(suite)) throw ragError(400, 'BAD_REQUEST', 'suite is 1-64 of A-Z a-z 0-9 _ . -');
  const run = await latestRun(deps.db, caller.customerId, suite);
  if (!run) throw notFound(`a run of suite ${suite}`);
  const visual = run.results.filter((r) => r.kind === 'visual' && r.screenshotId !== null);
  if (visual.length === 0) throw ragError(409, 'NO_VISUAL_CHECKS', `the latest run of ${suite} has no visual check to accept`);
  const events: BaselineAccepted[] = visual.map((r) =>
    newEvent(
      'glm.baseline-accepted',
      { customerId: caller.customerId, suite, check: r.name, screenshotId: r.screenshotId!, reason: 'accepted' },
      { correlationId },
    ),
  );
  await publishAndApply(deps.publisher, deps.db, baselinesProjection, events);
  return { success: true, suite, runId: run.runId, accepted: visual.map((r) => ({ check: r.name, screenshotId: r.screenshotId! })) };
}
