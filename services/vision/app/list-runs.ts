import type { z } from 'zod';
import type { Caller } from '../../premium/caller.ts';
import type { VisionDeps } from '../engine.ts';
import type { runsAnswer, runsQuery } from '../review-schemas.ts';
import { recentRuns } from '../test-runs.projection.ts';
import { reportPath } from './run-review.ts';

/** GET /api/glm/runs: the caller's recent test runs, newest first, from the projection (nothing is spent). */
export async function listRuns(
  deps: Pick<VisionDeps, 'db'>,
  caller: Caller,
  query: z.output<typeof runsQuery>,
): Promise<z.output<typeof runsAnswer>> {
  const runs = await recentRuns(deps.db, caller.customerId, query.limit);
  return {
    success: true,
    runs: runs.map((r) => ({
      runId: r.runId,
      suite: r.suite,
      url: r.url,
      passed: r.passed,
      failed: r.failed,
      ranAt: new Date(r.ranAt).toISOString(),
      reportUrl: reportPath(r.runId),
    })),
  };
}
