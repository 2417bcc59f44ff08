import type { ResourceLink } from '@modelcontextprotocol/server';
import { analyzeScreenshot } from '../../vision/app/analyze-screenshot.ts';
import { capturePage } from '../../vision/app/capture-page.ts';
import { reviewSnapshot } from '../../vision/app/review-snapshot.ts';
import { runReview } from '../../vision/app/run-review.ts';
import { runTestSuite } from '../../vision/app/run-test-suite.ts';
import { analyzeAnswer, captureAnswer, testAnswer } from '../../vision/answers.ts';
import { analyzeInput, captureInput, testInput } from '../../vision/input.ts';
import { reviewAnswer, reviewInput, runAnswer, runInput } from '../../vision/review-schemas.ts';
import { defineTool, type Tool } from './tool.ts';

export const glmCaptureTool = defineTool({
  name: 'glm_capture',
  title: 'Capture a web page',
  description:
    "Loads a page in a headless browser and takes a screenshot (viewport, full page or one element), stored with the page's DOM and accessibility data at that moment. " +
    'Returns screenshotId and screenshotUrl for glm_analyze. Private and internal addresses are refused.',
  input: captureInput,
  output: captureAnswer,
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  async run(args, ctx, _signal, progress) {
    // With a progressToken: one notification as the browser starts, one once the page is captured.
    await progress(0, 1, `capturing ${args.url}`);
    const { answer } = await capturePage(ctx.vision.deps, ctx.caller, args, ctx.correlationId);
    await progress(1, 1, `captured ${answer.finalUrl}`);
    return answer;
  },
  render: (r) =>
    `captured "${r.title}" (${r.width}×${r.height}) from ${r.finalUrl}: ${r.screenshotUrl}${r.blockedRequests > 0 ? ` (${r.blockedRequests} requests refused)` : ''}`,
});

export const glmAnalyzeTool = defineTool({
  name: 'glm_analyze',
  title: 'Analyse a screenshot or page',
  description:
    'Finds UI problems in a screenshot (screenshotId or screenshotUrl from glm_capture), in a page captured now (url), or in any image URL (image-level checks only). ' +
    'Findings have a type, severity (minor..critical), message, CSS selector and box. Each call counts one toward your screenshotsAnalyzed quota.',
  input: analyzeInput,
  output: analyzeAnswer,
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  run: (args, ctx) => analyzeScreenshot(ctx.vision.deps, ctx.caller, args, ctx.correlationId),
  render(r) {
    const worst = r.findings.filter((f) => f.severity !== 'minor').slice(0, 20);
    const where = (f: (typeof worst)[number]) => (f.code?.[0] ? ` → ${f.code[0].file}:${f.code[0].startLine}-${f.code[0].endLine}` : '');
    const lines = worst.map((f) => `- [${f.severity}] ${f.type}: ${f.message}${f.selector ? ` (${f.selector})` : ''}${where(f)}`);
    const code = r.codeLinks.reason ? `\ncode links: ${r.codeLinks.reason}` : '';
    return `${r.summary}${lines.length > 0 ? `\n${lines.join('\n')}` : ''}${r.skipped.length > 0 ? `\nnot run: ${r.skipped.map((s) => `${s.check} (${s.reason})`).join('; ')}` : ''}${code}`;
  },
});

export const glmTestTool = defineTool({
  name: 'glm_test',
  title: 'Run a visual test suite',
  description:
    "Runs a named suite of checks against a page: visual (pixel comparison with the suite's baseline; the first run records it), element (exists, visible, text), a11y (maximum axe impact), layout (rules). " +
    'Returns passed/failed per check, with a diff image URL for visual failures. Each run counts one toward screenshotsAnalyzed.',
  input: testInput,
  output: testAnswer,
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  run: (args, ctx) => runTestSuite(ctx.vision.deps, ctx.caller, args, ctx.correlationId),
  render: (r) =>
    `suite ${r.suite}: ${r.passed} passed, ${r.failed} failed\n${r.results.map((c) => `- ${c.status} ${c.name} (${c.type}): ${c.message}`).join('\n')}`,
});

export const glmRunTool = defineTool({
  name: 'glm_run',
  title: 'Read a visual test run',
  description:
    'A run of glm_test by its runId: each visual snapshot (check@viewport) with its status, diff ratio and pixels, the URLs of its capture, baseline and diff, ' +
    'whether it was accepted or rejected, and reportUrl: the self-contained HTML review page (baseline, current and diff side by side, a slider, per viewport).',
  input: runInput,
  output: runAnswer,
  annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
  run: (args, ctx) => runReview(ctx.vision.deps, ctx.caller, args.runId),
  // The review page and every capture, baseline and diff, as resource links (fetched with the key, as the URLs are).
  links: (r) => [
    { type: 'resource_link', uri: r.reportUrl, name: `review-${r.runId}`, title: `Review page of run ${r.runId}`, mimeType: 'text/html' },
    ...r.snapshots.flatMap((s) => {
      const images: [string, string | null][] = [
        ['capture', s.screenshotUrl],
        ['baseline', s.baselineUrl],
        ['diff', s.diffUrl],
      ];
      return images.flatMap(([kind, uri]): ResourceLink[] =>
        uri
          ? [{ type: 'resource_link', uri, name: `${s.snapshot}-${kind}`, title: `${kind} of ${s.snapshot}`, mimeType: 'image/png' }]
          : [],
      );
    }),
  ],
  render: (r) =>
    `run ${r.runId} of ${r.suite}${r.latest ? '' : ' (not the latest)'}: ${r.passed} passed, ${r.failed} failed; review page ${r.reportUrl}
${r.snapshots
  .map(
    (s) =>
      `- ${s.status} ${s.snapshot}: diff ${s.diffRatio ?? '-'}${s.diffPixels === null ? '' : ` (${s.diffPixels} px)`}, ${s.decision ?? 'undecided'}`,
  )
  .join('\n')}`,
});

export const glmReviewTool = defineTool({
  name: 'glm_review',
  title: 'Accept or reject one snapshot of a visual test run',
  description:
    "Decides on one snapshot (check@viewport) of a suite's latest run: accepted makes its capture that check's baseline (later runs compare with it); " +
    'rejected records the decision and keeps the baseline. The same decision twice changes nothing; a run that is not the latest of its suite is refused (RUN_SUPERSEDED).',
  input: reviewInput,
  output: reviewAnswer,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  run: (args, ctx) => reviewSnapshot(ctx.vision.deps, ctx.caller, args.runId, args.snapshot, args.decision, ctx.correlationId),
  render: (r) => `${r.snapshot} of run ${r.runId}: ${r.decision}${r.changed ? '' : ' (already)'}; baseline ${r.baselineId ?? 'none'}`,
});

export const GLM_TOOLS: readonly Tool[] = [glmCaptureTool, glmAnalyzeTool, glmTestTool, glmRunTool, glmReviewTool];
