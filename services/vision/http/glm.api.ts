import { z } from 'zod';
import type { ApiOperation } from '../../platform/http/openapi.ts';
import { API_PATHS } from '../../premium/api-paths.ts';
import { GATED, gateResponses } from '../../premium/premium-answers.ts';
import { acceptAnswer, analyzeAnswer, captureAnswer, deletedAnswer, testAnswer } from '../answers.ts';
import { reviewAnswer, runAnswer, runsAnswer, runsQuery } from '../review-schemas.ts';
import { analyzeInput, captureInput, testInput } from '../input.ts';

// The routes read these as plain strings (glm.routes.ts); an unknown one is 404.
const suiteParam = z.object({ suite: z.string().describe('The name of a test suite of yours.') });
const screenshotParam = z.object({ id: z.string().describe('A screenshotId of yours.') });
const diffParam = z.object({ id: z.string().describe('A diff id of yours (from a visual check’s diffUrl).') });
const png = z.string().describe('A PNG image.');
const runParam = z.object({ runId: z.string().describe('A runId of yours (from a test run).') });
const snapshotParam = runParam.extend({
  snapshot: z.string().describe('A visual check of the run, as the run names it: check@viewport when the suite has viewports.'),
});
const html = z.string().describe('A self-contained HTML page.');

/** The vision routes (glm.routes.ts) in the vision RAG face's document. */
export const glmOperations = (errorSchema: z.ZodType): ApiOperation[] => {
  const gate = gateResponses(errorSchema);
  const tags = ['vision'];
  const pageErrors = {
    422: { description: 'A selector that matches nothing, a page too large, not an image, or work over budget.', schema: errorSchema },
    502: { description: 'The page did not load.', schema: errorSchema },
    503: { description: 'No browser, or every slot busy.', schema: errorSchema, headers: ['Retry-After'] },
    504: { description: 'The page took too long.', schema: errorSchema },
  };
  const notFound = { description: 'Not one of yours.', schema: errorSchema };
  return [
    {
      method: 'post',
      path: API_PATHS.glm.capture,
      summary: 'Capture a page',
      tags,
      security: GATED,
      body: { schema: captureInput },
      responses: { 200: { description: 'The screenshot, stored.', schema: captureAnswer }, ...gate, ...pageErrors },
    },
    {
      method: 'post',
      path: API_PATHS.glm.analyze,
      summary: 'Analyse a screenshot, a page or an image',
      tags,
      security: GATED,
      body: { schema: analyzeInput },
      responses: {
        200: { description: 'The findings.', schema: analyzeAnswer },
        ...gate,
        404: notFound,
        413: { description: 'An image past 40 megapixels.', schema: errorSchema },
        ...pageErrors,
      },
    },
    {
      method: 'post',
      path: API_PATHS.glm.test,
      summary: 'Run a visual test suite',
      tags,
      security: GATED,
      body: { schema: testInput },
      responses: { 200: { description: 'Passed and failed, per check.', schema: testAnswer }, ...gate, ...pageErrors },
    },
    {
      method: 'post',
      path: '/api/glm/baselines/:suite/accept',
      summary: "The suite's latest captures become its baselines",
      tags,
      security: GATED,
      params: suiteParam,
      responses: { 200: { description: 'The baselines accepted.', schema: acceptAnswer }, ...gate, 404: notFound },
    },
    {
      method: 'get',
      path: '/api/glm/runs',
      summary: 'Your recent test runs, newest first',
      tags,
      security: GATED,
      query: runsQuery,
      responses: { 200: { description: 'The runs, each with its review page.', schema: runsAnswer }, ...gate },
    },
    {
      method: 'get',
      path: '/api/glm/runs/:runId',
      summary: 'A test run, with each snapshot and the decision on it',
      tags,
      security: GATED,
      params: runParam,
      responses: { 200: { description: 'The run.', schema: runAnswer }, ...gate, 404: notFound },
    },
    {
      method: 'get',
      path: '/api/glm/runs/:runId/report',
      summary: "A test run's review page",
      tags,
      security: GATED,
      params: runParam,
      responses: {
        200: {
          description:
            'Per viewport, each snapshot’s baseline, capture and diff side by side, a slider and the decision; images inline, no requests.',
          schema: html,
          contentType: 'text/html',
          headers: ['Cache-Control'],
        },
        ...gate,
        404: notFound,
      },
    },
    ...(['accept', 'reject'] as const).map(
      (verb): ApiOperation => ({
        method: 'post',
        path: `/api/glm/runs/:runId/snapshots/:snapshot/${verb}`,
        summary:
          verb === 'accept'
            ? "One snapshot's capture becomes the baseline of its check@viewport"
            : 'Reject one snapshot: the decision is recorded, the baseline stays',
        tags,
        security: GATED,
        params: snapshotParam,
        responses: {
          200: { description: 'The decision (changed false when it had been recorded already).', schema: reviewAnswer },
          ...gate,
          404: notFound,
          409: {
            description:
              verb === 'accept'
                ? 'Not the suite’s latest run (RUN_SUPERSEDED).'
                : 'Not the suite’s latest run (RUN_SUPERSEDED), or the snapshot was accepted (ALREADY_ACCEPTED).',
            schema: errorSchema,
          },
        },
      }),
    ),
    {
      method: 'get',
      path: '/api/glm/screenshots/:id',
      summary: 'A screenshot of yours',
      tags,
      security: GATED,
      params: screenshotParam,
      responses: {
        200: { description: 'The image.', schema: png, contentType: 'image/png', headers: ['Cache-Control'] },
        ...gate,
        404: notFound,
      },
    },
    {
      method: 'get',
      path: '/api/glm/diffs/:id',
      summary: 'A diff image of a visual check',
      tags,
      security: GATED,
      params: diffParam,
      responses: {
        200: { description: 'The image.', schema: png, contentType: 'image/png', headers: ['Cache-Control'] },
        ...gate,
        404: notFound,
      },
    },
    {
      method: 'delete',
      path: '/api/glm/screenshots/:id',
      summary: 'Delete a screenshot of yours',
      tags,
      security: GATED,
      params: screenshotParam,
      responses: {
        200: { description: 'Deleted.', schema: deletedAnswer },
        ...gate,
        404: notFound,
        409: { description: 'A suite still compares with it (BASELINE_IN_USE).', schema: errorSchema },
      },
    },
    {
      method: 'delete',
      path: '/api/glm/diffs/:id',
      summary: 'Delete a diff image of yours',
      tags,
      security: GATED,
      params: diffParam,
      responses: { 200: { description: 'Deleted.', schema: deletedAnswer }, ...gate, 404: notFound },
    },
  ];
};
