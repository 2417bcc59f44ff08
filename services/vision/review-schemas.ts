import { z } from 'zod';

/**
 * The review of a visual test run (app/run-review.ts, app/review-snapshot.ts): what the tools take,
 * and what the HTTP face and the tools answer.
 */

/** The `glm_run` tool's arguments (GET /api/glm/runs/{runId} takes the id in its path). */
export const runInput = z.object({ runId: z.string().max(64).describe('A runId from glm_test.') });

/** The `glm_review` tool's arguments (the HTTP face takes them in its path). */
export const reviewInput = runInput.extend({
  snapshot: z.string().max(100).describe('A visual check of the run as glm_run names it: check@viewport when the suite has viewports.'),
  decision: z
    .enum(['accepted', 'rejected'])
    .describe('accepted: the capture becomes the baseline of that check@viewport; rejected: recorded, the baseline stays.'),
});

const decision = z.enum(['accepted', 'rejected']);

const snapshot = z.object({
  snapshot: z.string().describe('The visual check in the run: check@viewport when the suite has viewports, else the check.'),
  check: z.string(),
  viewport: z.string().nullable().describe('The viewport’s name; null for a suite of one viewport.'),
  status: z.enum(['passed', 'failed']),
  message: z.string(),
  diffRatio: z.number().nullable(),
  diffPixels: z.number().nullable(),
  screenshotId: z.string(),
  screenshotUrl: z.string(),
  baselineId: z.string().nullable().describe('The baseline this run compared with; null when there was none (the capture became it).'),
  baselineUrl: z.string().nullable(),
  diffId: z.string().nullable(),
  diffUrl: z.string().nullable(),
  isBaseline: z.boolean().describe('The capture is the check’s baseline now (its first run, or accepted).'),
  decision: decision.nullable().describe('Accepted or rejected on review; null while undecided.'),
  decidedAt: z.string().nullable(),
});

export const runAnswer = z.object({
  success: z.literal(true),
  runId: z.string(),
  suite: z.string(),
  url: z.string(),
  ranAt: z.string(),
  passed: z.number(),
  failed: z.number(),
  latest: z.boolean().describe('The suite’s latest run: only its snapshots can be accepted or rejected.'),
  reportUrl: z.string().describe('The review page of the run (GET, with your key).'),
  checks: z.array(
    z.object({
      name: z.string(),
      type: z.enum(['visual', 'element', 'a11y', 'layout']),
      status: z.enum(['passed', 'failed']),
      message: z.string(),
    }),
  ),
  snapshots: z.array(snapshot),
});

export const reviewAnswer = z.object({
  success: z.literal(true),
  runId: z.string(),
  suite: z.string(),
  snapshot: z.string(),
  decision,
  screenshotId: z.string().describe('The run’s capture of the snapshot.'),
  baselineId: z.string().nullable().describe('The check’s baseline after the decision.'),
  changed: z.boolean().describe('False when the same decision had already been recorded (nothing was published).'),
});

/** GET /api/glm/runs: the caller's recent runs, newest first. */
export const runsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(50).default(20).describe('How many runs, 1-50.'),
});
export const runsAnswer = z.object({
  success: z.literal(true),
  runs: z.array(
    z.object({
      runId: z.string(),
      suite: z.string(),
      url: z.string(),
      passed: z.number().int(),
      failed: z.number().int(),
      ranAt: z.string().describe('ISO 8601'),
      reportUrl: z.string().describe('Its review page (GET, with the key).'),
    }),
  ),
});
