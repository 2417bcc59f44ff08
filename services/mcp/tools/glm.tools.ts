import { analyzeScreenshot } from '../../vision/app/analyze-screenshot.ts';
import { capturePage } from '../../vision/app/capture-page.ts';
import { runTestSuite } from '../../vision/app/run-test-suite.ts';
import { analyzeAnswer, captureAnswer, testAnswer } from '../../vision/answers.ts';
import { analyzeInput, captureInput, testInput } from '../../vision/input.ts';
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
  run: async (args, ctx) => (await capturePage(ctx.vision.deps, ctx.caller, args, ctx.correlationId)).answer,
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
    const lines = worst.map((f) => `- [${f.severity}] ${f.type}: ${f.message}${f.selector ? ` (${f.selector})` : ''}`);
    return `${r.summary}${lines.length > 0 ? `\n${lines.join('\n')}` : ''}${r.skipped.length > 0 ? `\nnot run: ${r.skipped.map((s) => `${s.check} (${s.reason})`).join('; ')}` : ''}`;
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

export const GLM_TOOLS: readonly Tool[] = [glmCaptureTool, glmAnalyzeTool, glmTestTool];
