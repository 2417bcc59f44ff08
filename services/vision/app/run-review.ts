import type { z } from 'zod';
import { notFound, type Caller } from '../../premium/caller.ts';
import type { runAnswer } from '../review-schemas.ts';
import { getBaseline } from '../baselines.projection.ts';
import type { VisionDeps } from '../engine.ts';
import { reviewsOfRun } from '../snapshot-reviews.projection.ts';
import { latestRun, runOf, type TestRun } from '../test-runs.projection.ts';
import { screenshotPath } from './capture-page.ts';

export type RunAnswer = z.infer<typeof runAnswer>;
export type SnapshotAnswer = RunAnswer['snapshots'][number];

/** Run ids are UUIDs (run-test-suite.ts): anything else cannot be one, and is 404 before any read. */
const RUN_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const reportPath = (runId: string): string => `/api/glm/runs/${runId}/report`;

/** A run of this caller's customer; another customer's, or none, is the same 404. */
export async function ownRun(deps: VisionDeps, caller: Caller, runId: string): Promise<TestRun> {
  const run = RUN_ID.test(runId) ? await runOf(deps.db, caller.customerId, runId) : null;
  if (!run) throw notFound(`run ${runId}`);
  return run;
}

/** check@viewport as its two parts: check names never hold an @ (input.ts), viewport names neither. */
export function splitSnapshot(name: string): { check: string; viewport: string | null } {
  const at = name.indexOf('@');
  return at < 0 ? { check: name, viewport: null } : { check: name.slice(0, at), viewport: name.slice(at + 1) };
}

/**
 * GET /api/glm/runs/{runId} and `glm_run`: a run as it was answered, with each visual check's
 * snapshot (its capture, the baseline it was compared with, the diff) and the decision on it.
 */
export async function runReview(deps: VisionDeps, caller: Caller, runId: string): Promise<RunAnswer> {
  const run = await ownRun(deps, caller, runId);
  const [latest, reviews] = await Promise.all([
    latestRun(deps.db, caller.customerId, run.suite),
    reviewsOfRun(deps.db, caller.customerId, runId),
  ]);
  const base = deps.config.publicRagUrl;
  const snapshots: SnapshotAnswer[] = [];
  for (const r of run.results) {
    if (r.kind !== 'visual' || r.screenshotId === null) continue;
    const baseline = await getBaseline(deps.db, caller.customerId, run.suite, r.name);
    const review = reviews.get(r.name);
    // Runs recorded before v2 of the event hold no baselineId or diffPixels: read as unknown.
    const baselineId = r.baselineId ?? null;
    snapshots.push({
      snapshot: r.name,
      ...splitSnapshot(r.name),
      status: r.status,
      message: r.message,
      diffRatio: r.diffRatio,
      diffPixels: r.diffPixels ?? null,
      screenshotId: r.screenshotId,
      screenshotUrl: `${base}${screenshotPath(r.screenshotId)}`,
      baselineId,
      baselineUrl: baselineId === null ? null : `${base}${screenshotPath(baselineId)}`,
      diffId: r.diffId,
      diffUrl: r.diffId === null ? null : `${base}/api/glm/diffs/${r.diffId}`,
      isBaseline: baseline?.screenshotId === r.screenshotId,
      decision: review?.decision ?? null,
      decidedAt: review ? new Date(review.decidedAt).toISOString() : null,
    });
  }
  return {
    success: true,
    runId: run.runId,
    suite: run.suite,
    url: run.url,
    ranAt: new Date(run.ranAt).toISOString(),
    passed: run.passed,
    failed: run.failed,
    latest: latest?.runId === run.runId,
    reportUrl: `${base}${reportPath(run.runId)}`,
    checks: run.results.map((r) => ({ name: r.name, type: r.kind, status: r.status, message: r.message })),
    snapshots,
  };
}
