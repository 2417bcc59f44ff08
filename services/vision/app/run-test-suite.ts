import { randomUUID } from 'node:crypto';
import { newEvent } from '../../../events/envelope.ts';
import { publishAndApply } from '../../../events/own-events.ts';
import type { Caller } from '../../rag/caller.ts';
import { checkQuota, meter } from '../../rag/app/meter.ts';
import { analyze, diffImages } from '../analysis/analyze.ts';
import type { PageReport } from '../analysis/page-report.ts';
import { SEVERITIES } from '../analysis/types.ts';
import { baselinesProjection, getBaseline } from '../baselines.projection.ts';
import type { VisionDeps } from '../engine.ts';
import type { BaselineAccepted, CheckResultData, VisualTestCompleted } from '../events.ts';
import type { TestCheck, TestInput } from '../input.ts';
import { testRunsProjection } from '../test-runs.projection.ts';
import { loadScreenshot } from './analyze-screenshot.ts';
import { capturePage } from './capture-page.ts';

export interface TestAnswer {
  success: true;
  suite: string;
  runId: string;
  passed: number;
  failed: number;
  results: { name: string; type: TestCheck['type']; status: 'passed' | 'failed'; message: string; diffUrl?: string; diffRatio?: number; screenshotId?: string }[];
}

type Visual = Extract<TestCheck, { type: 'visual' }>;

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * POST /api/glm/test and the `glm_test` tool: a named suite of checks against one page. The page
 * is captured once (its report answers the element, a11y and layout checks); a visual check with a
 * selector or full page gets a capture of its own. The first run of a visual check records its
 * baseline; later runs compare with it (pixelmatch) and store the diff image. One run uses one
 * `screenshotsAnalyzed`.
 */
export async function runTestSuite(deps: VisionDeps, caller: Caller, input: TestInput, correlationId: string): Promise<TestAnswer> {
  const started = Date.now();
  const suite = input.testSuite;
  checkQuota(deps, caller, 'screenshotsAnalyzed', 1);
  const viewport = suite.viewport ? { viewport: suite.viewport } : {};
  const probes = suite.checks.filter((c) => c.type === 'element').map((c) => ({ selector: c.selector }));
  const page = await capturePage(deps, caller, { url: input.url, fullPage: false, ...viewport }, correlationId, { source: 'test', probes });
  await meter(deps, caller, 'screenshotsAnalyzed', 1, correlationId);

  const results: CheckResultData[] = [];
  const firstBaselines: BaselineAccepted[] = [];
  for (const check of suite.checks) {
    switch (check.type) {
      case 'visual': {
        const shot =
          check.selector === undefined && !check.fullPage
            ? page
            : await capturePage(deps, caller, { url: input.url, fullPage: check.fullPage, ...(check.selector !== undefined ? { selector: check.selector } : {}), ...viewport }, correlationId, { source: 'test' });
        const outcome = await visualCheck(deps, caller, suite.name, check, shot.answer.screenshotId, shot.png, correlationId);
        if (outcome.baseline) firstBaselines.push(outcome.baseline);
        results.push(outcome.result);
        break;
      }
      case 'element':
        results.push(elementCheck(check, page.report));
        break;
      case 'a11y': {
        const findings = analyze('accessibility', { report: page.report, png: page.png }).findings;
        const allowed = check.maxImpact === 'none' ? -1 : SEVERITIES.indexOf(check.maxImpact);
        const over = findings.filter((f) => SEVERITIES.indexOf(f.severity) > allowed);
        results.push(result(check, over.length === 0, over.length === 0 ? `no violation above ${check.maxImpact}` : `${plural(over.length, 'violation')} above ${check.maxImpact}: ${[...new Set(over.map((f) => f.type))].join(', ')}`));
        break;
      }
      case 'layout': {
        const rules = new Set<string>(check.rules ?? ['overlap', 'viewport-overflow', 'container-overflow', 'off-screen', 'small-tap-target', 'misaligned']);
        const hits = analyze('layout', { report: page.report, png: page.png }).findings.filter((f) => rules.has(f.type));
        results.push(result(check, hits.length === 0, hits.length === 0 ? 'no layout problem of the rules checked' : `${plural(hits.length, 'problem')}: ${hits.slice(0, 5).map((f) => f.message).join('; ')}`));
        break;
      }
    }
  }
  const passed = results.filter((r) => r.status === 'passed').length;
  const runId = randomUUID();
  const run: VisualTestCompleted = newEvent(
    'glm.visual-test-completed',
    { runId, customerId: caller.customerId, keyHash: caller.keyHash, suite: suite.name, url: input.url, screenshotId: page.answer.screenshotId, passed, failed: results.length - passed, results, durationMs: Date.now() - started },
    { correlationId },
  );
  if (firstBaselines.length > 0) await publishAndApply(deps.publisher, deps.db, baselinesProjection, firstBaselines);
  await publishAndApply(deps.publisher, deps.db, testRunsProjection, [run]);
  return {
    success: true,
    suite: suite.name,
    runId,
    passed,
    failed: results.length - passed,
    results: results.map((r) => ({
      name: r.name,
      type: r.kind,
      status: r.status,
      message: r.message,
      ...(r.diffId ? { diffUrl: `${deps.config.publicRagUrl}/api/glm/diffs/${r.diffId}` } : {}),
      ...(r.diffRatio !== null ? { diffRatio: r.diffRatio } : {}),
      ...(r.screenshotId ? { screenshotId: r.screenshotId } : {}),
    })),
  };
}

function result(check: TestCheck, ok: boolean, message: string, extra: Partial<CheckResultData> = {}): CheckResultData {
  return { name: check.name, kind: check.type, status: ok ? 'passed' : 'failed', message, diffId: null, diffRatio: null, screenshotId: null, ...extra };
}

async function visualCheck(
  deps: VisionDeps,
  caller: Caller,
  suite: string,
  check: Visual,
  screenshotId: string,
  png: Buffer,
  correlationId: string,
): Promise<{ result: CheckResultData; baseline?: BaselineAccepted }> {
  const baseline = await getBaseline(deps.db, caller.customerId, suite, check.name);
  if (!baseline) {
    const event: BaselineAccepted = newEvent('glm.baseline-accepted', { customerId: caller.customerId, suite, check: check.name, screenshotId, reason: 'first_run' }, { correlationId });
    return { result: result(check, true, 'no baseline yet: this capture is now the baseline', { screenshotId }), baseline: event };
  }
  const reference = await loadScreenshot(deps, caller, baseline.screenshotId);
  const diff = diffImages(reference.png, png, check.pixelThreshold);
  if (!diff.sameSize) {
    return { result: result(check, false, `the capture is ${diff.width}×${diff.height}, the baseline is not: sizes differ`, { screenshotId }) };
  }
  const diffId = diff.diffPng ? await deps.blobs.put(diff.diffPng, { customerId: caller.customerId, kind: 'diff', contentType: 'image/png' }) : null;
  const ok = diff.diffRatio <= check.maxDiffRatio;
  const share = `${(diff.diffRatio * 100).toFixed(3)} % of pixels differ (${diff.diffPixels})`;
  return { result: result(check, ok, ok ? `${share}, within ${check.maxDiffRatio * 100} %` : `${share}, over ${check.maxDiffRatio * 100} %`, { diffId, diffRatio: diff.diffRatio, screenshotId }) };
}

function elementCheck(check: Extract<TestCheck, { type: 'element' }>, report: PageReport): CheckResultData {
  const probe = report.probes?.find((p) => p.selector === check.selector);
  if (!probe?.exists) return result(check, false, `no element matches ${check.selector}`);
  if (probe.visible !== check.visible) return result(check, false, `${check.selector} is ${probe.visible ? 'visible' : 'not visible'}`);
  if (check.text !== undefined && !probe.text.includes(check.text)) return result(check, false, `${check.selector} does not contain "${check.text}" (it reads "${probe.text.slice(0, 100)}")`);
  return result(check, true, `${check.selector} ${check.visible ? 'is visible' : 'is not visible'}${check.text !== undefined ? ` and contains "${check.text}"` : ''}`);
}

