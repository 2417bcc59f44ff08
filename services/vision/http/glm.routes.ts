import type { Express, Response } from 'express';
import type { Admitted, KeyGate } from '../../keys/gate.ts';
import { API_PATHS } from '../../premium/api-paths.ts';
import { admitter, callerOf, parse } from '../../premium/gated-request.ts';
import { listRuns } from '../app/list-runs.ts';
import { runsQuery } from '../review-schemas.ts';
import { acceptBaselines } from '../app/accept-baselines.ts';
import { analyzeScreenshot } from '../app/analyze-screenshot.ts';
import { capturePage } from '../app/capture-page.ts';
import { deleteDiff, deleteScreenshot } from '../app/delete-stored.ts';
import { diffPng, screenshotPng } from '../app/read-image.ts';
import { reviewPage } from '../app/review-page.ts';
import { reviewSnapshot } from '../app/review-snapshot.ts';
import { runReview } from '../app/run-review.ts';
import { runTestSuite } from '../app/run-test-suite.ts';
import type { VisionCaller } from '../app/storage-limit.ts';
import type { VisionDeps } from '../engine.ts';
import { analyzeInput, captureInput, testInput } from '../input.ts';

const sendPng = (res: Response, png: Buffer) => {
  // A customer's own screenshot: never in a shared cache.
  res.set({ 'Content-Type': 'image/png', 'Cache-Control': 'private, max-age=3600', 'X-Content-Type-Options': 'nosniff' }).send(png);
};

/** The caller with its key's tier, which chooses its storage bound. */
const visionCaller = (admitted: Admitted): VisionCaller => ({ ...callerOf(admitted), tier: admitted.identity.tier });

/**
 * The vision operations over HTTP, behind the same gate as retrieval (401, 403, 403 subscription
 * required, 429). Captures, analyses and test runs use `screenshotsAnalyzed` (services/vision/app);
 * reading an image back and deleting one use none.
 */
export function mountGlmRoutes(app: Express, deps: VisionDeps, gate: KeyGate): void {
  // The gate checks key, subscription and rate; the operations check the screenshotsAnalyzed quota themselves.
  const admit = admitter(gate);

  app.post(API_PATHS.glm.capture, async (req, res) => {
    const admitted = await admit(req, res);
    if (!admitted) return;
    res.json((await capturePage(deps, visionCaller(admitted), parse(captureInput, req.body), req.id)).answer);
  });

  app.post(API_PATHS.glm.analyze, async (req, res) => {
    const admitted = await admit(req, res);
    if (!admitted) return;
    res.json(await analyzeScreenshot(deps, visionCaller(admitted), parse(analyzeInput, req.body), req.id));
  });

  app.post(API_PATHS.glm.test, async (req, res) => {
    const admitted = await admit(req, res);
    if (!admitted) return;
    res.json(await runTestSuite(deps, visionCaller(admitted), parse(testInput, req.body), req.id));
  });

  app.post('/api/glm/baselines/:suite/accept', async (req, res) => {
    const admitted = await admit(req, res);
    if (!admitted) return;
    res.json(await acceptBaselines(deps, callerOf(admitted), String(req.params.suite), req.id));
  });

  app.get('/api/glm/runs', async (req, res) => {
    const admitted = await admit(req, res);
    if (!admitted) return;
    res.json(await listRuns(deps, callerOf(admitted), parse(runsQuery, req.query)));
  });

  app.get('/api/glm/runs/:runId', async (req, res) => {
    const admitted = await admit(req, res);
    if (!admitted) return;
    res.json(await runReview(deps, callerOf(admitted), String(req.params.runId)));
  });

  app.get('/api/glm/runs/:runId/report', async (req, res) => {
    const admitted = await admit(req, res);
    if (!admitted) return;
    const page = await reviewPage(deps, callerOf(admitted), String(req.params.runId));
    // The customer's own captures: never in a shared cache; the policy also in its header, where frame-ancestors counts.
    res
      .set({
        'Content-Type': 'text/html; charset=utf-8',
        'Content-Security-Policy': `${page.policy}; frame-ancestors 'none'`,
        'Cache-Control': 'private, no-store',
        'X-Content-Type-Options': 'nosniff',
        'Referrer-Policy': 'no-referrer',
      })
      .send(page.html);
  });

  for (const [verb, decision] of [
    ['accept', 'accepted'],
    ['reject', 'rejected'],
  ] as const) {
    app.post(`/api/glm/runs/:runId/snapshots/:snapshot/${verb}`, async (req, res) => {
      const admitted = await admit(req, res);
      if (!admitted) return;
      const { runId, snapshot } = req.params;
      res.json(await reviewSnapshot(deps, callerOf(admitted), String(runId), String(snapshot), decision, req.id));
    });
  }

  app.get('/api/glm/screenshots/:id', async (req, res) => {
    const admitted = await admit(req, res);
    if (!admitted) return;
    sendPng(res, await screenshotPng(deps, callerOf(admitted), String(req.params.id)));
  });

  app.get('/api/glm/diffs/:id', async (req, res) => {
    const admitted = await admit(req, res);
    if (!admitted) return;
    sendPng(res, await diffPng(deps, callerOf(admitted), String(req.params.id)));
  });

  app.delete('/api/glm/screenshots/:id', async (req, res) => {
    const admitted = await admit(req, res);
    if (!admitted) return;
    res.json(await deleteScreenshot(deps, callerOf(admitted), String(req.params.id)));
  });

  app.delete('/api/glm/diffs/:id', async (req, res) => {
    const admitted = await admit(req, res);
    if (!admitted) return;
    res.json(await deleteDiff(deps, callerOf(admitted), String(req.params.id)));
  });
}
