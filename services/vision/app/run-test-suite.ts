import { randomUUID } from 'node:crypto';
import { newEvent } from '../../../events/envelope.ts';
import { publishAndApply } from '../../../events/own-events.ts';
import { checkQuota } from '../../premium/meter.ts';
import { HttpError } from '../../platform/http/errors.ts';
import { analyze } from '../analysis/analyze.ts';
import type { PageReport } from '../analysis/page-report.ts';
import type { ImageDiff } from '../analysis/png-checks.ts';
import { readPngHeader } from '../analysis/png-header.ts';
import { SEVERITIES } from '../analysis/types.ts';
import { baselinesProjection, getBaseline } from '../baselines.projection.ts';
import type { VisionDeps } from '../engine.ts';
import type { BaselineAccepted, CheckResultData, VisualTestCompleted } from '../events.ts';
import type { TestCheck, TestInput } from '../input.ts';
import { testRunsProjection } from '../test-runs.projection.ts';
import { loadScreenshot } from './analyze-screenshot.ts';
import { judgeDiff } from './judge-diff.ts';
import { capturePage } from './capture-page.ts';
import type { CapturePreparation } from '../browser/capture.ts';
import type { ContextViewport } from '../browser/guarded-context.ts';
import { asBuffer, compareImagesTask, decodeBudget, runImageTask } from './image-work.ts';
import type { VisionCaller } from './storage-limit.ts';

export interface TestAnswer {
  success: true;
  suite: string;
  runId: string;
  passed: number;
  failed: number;
  results: {
    name: string;
    type: TestCheck['type'];
    status: 'passed' | 'failed';
    message: string;
    diffUrl?: string;
    diffRatio?: number;
    screenshotId?: string;
    /** The page kept changing between screenshots: the verdict is on its last one, and may not repeat. */
    flaky?: boolean;
  }[];
}

type Visual = Extract<TestCheck, { type: 'visual' }>;

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * Where the suite's checks run: each of its viewports, named (results and baselines are check@name),
 * or its one viewport (or the browser's default), unnamed as before viewports existed.
 */
function viewportsOf(suite: TestInput['testSuite']): { label: string | null; capture: { viewport?: ContextViewport } }[] {
  if (suite.viewports) {
    return suite.viewports.map((v) => ({
      label: v.name,
      capture: { viewport: { width: v.width, height: v.height, deviceScaleFactor: v.deviceScaleFactor, colorScheme: v.colorScheme } },
    }));
  }
  return [{ label: null, capture: suite.viewport ? { viewport: suite.viewport } : {} }];
}

/** What every capture of the suite does before its screenshot; nothing when the suite asks for none. */
function preparationOf(suite: TestInput['testSuite']): { prepare?: CapturePreparation } {
  if (!suite.steps && !suite.cookies && !suite.localStorage) return {};
  return {
    prepare: {
      ...(suite.steps ? { steps: suite.steps } : {}),
      ...(suite.cookies ? { cookies: suite.cookies } : {}),
      ...(suite.localStorage ? { localStorage: suite.localStorage } : {}),
    },
  };
}

const ownCapture = (check: TestCheck): boolean =>
  check.type === 'visual' && (check.selector !== undefined || check.fullPage || (check.mask?.length ?? 0) > 0);

/**
 * POST /api/glm/test and the `glm_test` tool: a named suite of checks against one page. The page
 * is captured once (its report answers the element, a11y and layout checks); a visual check with a
 * selector or full page gets a capture of its own. The first run of a visual check records its
 * baseline; later runs compare with it (pixelmatch, on the image pool) and store the diff image.
 * Each capture of a run uses one `screenshotsAnalyzed`: a run of 20 captures is 20 uses, refused at
 * once if the quota has not room for them all.
 */
export async function runTestSuite(deps: VisionDeps, caller: VisionCaller, input: TestInput, correlationId: string): Promise<TestAnswer> {
  const started = Date.now();
  const suite = input.testSuite;
  const targets = viewportsOf(suite);
  const prepare = preparationOf(suite);
  checkQuota(deps, caller, 'screenshotsAnalyzed', (1 + suite.checks.filter(ownCapture).length) * targets.length);
  const probes = suite.checks.filter((c) => c.type === 'element').map((c) => ({ selector: c.selector }));

  const results: CheckResultData[] = [];
  const firstBaselines: BaselineAccepted[] = [];
  let pageShot: string | undefined;
  const flaky = new Set<string>();
  for (const target of targets) {
    const page = await capturePage(deps, caller, { url: input.url, fullPage: false }, correlationId, {
      source: 'test',
      probes,
      stable: true,
      ...prepare,
      ...target.capture,
    });
    pageShot ??= page.answer.screenshotId;
    for (const original of suite.checks) {
      const check = target.label === null ? original : { ...original, name: `${original.name}@${target.label}` };
      switch (check.type) {
        case 'visual': {
          const shot = !ownCapture(check)
            ? page
            : await capturePage(
                deps,
                caller,
                {
                  url: input.url,
                  fullPage: check.fullPage,
                  ...(check.selector !== undefined ? { selector: check.selector } : {}),
                },
                correlationId,
                {
                  source: 'test',
                  stable: true,
                  ...(check.mask && check.mask.length > 0 ? { mask: check.mask } : {}),
                  ...prepare,
                  ...target.capture,
                },
              );
          const outcome = await visualCheck(deps, caller, suite.name, check, shot.answer.screenshotId, shot.png, correlationId);
          if (outcome.baseline) firstBaselines.push(outcome.baseline);
          results.push(withStability(outcome.result, shot.stability));
          if (shot.stability && !shot.stability.stable) flaky.add(check.name);
          break;
        }
        case 'element':
          results.push(elementCheck(check, page.report));
          break;
        // The a11y and layout checks read the page report only (bounded by the report's caps), never
        // the pixels: they stay here rather than pay a trip to the image pool.
        case 'a11y': {
          const findings = analyze('accessibility', { report: page.report, png: page.png }).findings;
          const allowed = check.maxImpact === 'none' ? -1 : SEVERITIES.indexOf(check.maxImpact);
          const over = findings.filter((f) => SEVERITIES.indexOf(f.severity) > allowed);
          results.push(
            result(
              check,
              over.length === 0,
              over.length === 0
                ? `no violation above ${check.maxImpact}`
                : `${plural(over.length, 'violation')} above ${check.maxImpact}: ${[...new Set(over.map((f) => f.type))].join(', ')}`,
            ),
          );
          break;
        }
        case 'layout': {
          const rules = new Set<string>(
            check.rules ?? ['overlap', 'viewport-overflow', 'container-overflow', 'off-screen', 'small-tap-target', 'misaligned'],
          );
          const hits = analyze('layout', { report: page.report, png: page.png }).findings.filter((f) => rules.has(f.type));
          results.push(
            result(
              check,
              hits.length === 0,
              hits.length === 0
                ? 'no layout problem of the rules checked'
                : `${plural(hits.length, 'problem')}: ${hits
                    .slice(0, 5)
                    .map((f) => f.message)
                    .join('; ')}`,
            ),
          );
          break;
        }
      }
    }
  }
  const passed = results.filter((r) => r.status === 'passed').length;
  const runId = randomUUID();
  const run: VisualTestCompleted = newEvent(
    'glm.visual-test-completed',
    {
      runId,
      customerId: caller.customerId,
      keyHash: caller.keyHash,
      suite: suite.name,
      url: input.url,
      screenshotId: pageShot as string,
      passed,
      failed: results.length - passed,
      results,
      durationMs: Date.now() - started,
    },
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
      ...(flaky.has(r.name) ? { flaky: true } : {}),
    })),
  };
}

/**
 * A page that never settled is reported, not failed for it: the verdict stands on the last
 * screenshot, and the message says the page moved, so a failure there is read as possibly flaky.
 */
function withStability(checked: CheckResultData, stability: { attempts: number; stable: boolean } | undefined): CheckResultData {
  if (!stability || stability.stable) return checked;
  return { ...checked, message: `flaky: the page changed between each of ${stability.attempts} screenshots; ${checked.message}` };
}

function result(check: TestCheck, ok: boolean, message: string, extra: Partial<CheckResultData> = {}): CheckResultData {
  return {
    name: check.name,
    kind: check.type,
    status: ok ? 'passed' : 'failed',
    message,
    diffId: null,
    diffRatio: null,
    screenshotId: null,
    baselineId: null,
    diffPixels: null,
    ...extra,
  };
}

async function visualCheck(
  deps: VisionDeps,
  caller: VisionCaller,
  suite: string,
  check: Visual,
  screenshotId: string,
  png: Buffer,
  correlationId: string,
): Promise<{ result: CheckResultData; baseline?: BaselineAccepted }> {
  const baseline = await getBaseline(deps.db, caller.customerId, suite, check.name);
  const reference = baseline ? await loadScreenshot(deps, caller, baseline.screenshotId).catch(gone) : null;
  if (!reference || !baseline) {
    const event: BaselineAccepted = newEvent(
      'glm.baseline-accepted',
      { customerId: caller.customerId, suite, check: check.name, screenshotId, reason: 'first_run' },
      { correlationId },
    );
    const why = baseline ? 'the baseline screenshot was deleted' : 'no baseline yet';
    return { result: result(check, true, `${why}: this capture is now the baseline`, { screenshotId }), baseline: event };
  }
  const baselineId = baseline.screenshotId;
  // Sizes from the headers: images that cannot match are not decoded at all.
  const [was, now] = [pngDimensions(reference.png), pngDimensions(png)];
  if (!was || !now || was.width !== now.width || was.height !== now.height) {
    const size = now ? `${now.width}×${now.height}` : 'not a PNG';
    return {
      result: result(
        check,
        false,
        `the capture is ${size}, the baseline ${was ? `${was.width}×${was.height}` : 'not a PNG'}: sizes differ`,
        { screenshotId, baselineId },
      ),
    };
  }
  let diff: ImageDiff;
  try {
    diff = await runImageTask(
      deps.images,
      compareImagesTask,
      {
        baseline: reference.png,
        current: png,
        threshold: check.pixelThreshold,
        maxDecodeBytes: decodeBudget(deps.config.vision.work.memoryMb),
      },
      caller.customerId,
    );
  } catch (error) {
    // One comparison past its budget fails its check; the run's other checks still count.
    if (error instanceof HttpError && (error.code === 'IMAGE_TOO_LARGE' || error.code === 'IMAGE_WORK_OVER_BUDGET')) {
      return { result: result(check, false, `not compared with the baseline: ${error.message}`, { screenshotId, baselineId }) };
    }
    throw error;
  }
  const diffId = diff.diffPng
    ? await deps.blobs.put(asBuffer(diff.diffPng), { customerId: caller.customerId, kind: 'diff', contentType: 'image/png' })
    : null;
  const { ok, message } = judgeDiff(diff, check);
  return {
    result: result(check, ok, message, {
      diffId,
      diffRatio: diff.diffRatio,
      diffPixels: diff.diffPixels,
      screenshotId,
      baselineId,
    }),
  };
}

/** A baseline whose screenshot is gone (deleted by its customer) is no baseline; other failures stand. */
const gone = (error: unknown): null => {
  if (error instanceof HttpError && error.status === 404) return null;
  throw error;
};

function pngDimensions(png: Buffer): { width: number; height: number } | null {
  try {
    return readPngHeader(png);
  } catch {
    return null;
  }
}

function elementCheck(check: Extract<TestCheck, { type: 'element' }>, report: PageReport): CheckResultData {
  const probe = report.probes?.find((p) => p.selector === check.selector);
  if (!probe?.exists) return result(check, false, `no element matches ${check.selector}`);
  if (probe.visible !== check.visible) return result(check, false, `${check.selector} is ${probe.visible ? 'visible' : 'not visible'}`);
  if (check.text !== undefined && !probe.text.includes(check.text))
    return result(check, false, `${check.selector} does not contain "${check.text}" (it reads "${probe.text.slice(0, 100)}")`);
  return result(
    check,
    true,
    `${check.selector} ${check.visible ? 'is visible' : 'is not visible'}${check.text !== undefined ? ` and contains "${check.text}"` : ''}`,
  );
}
