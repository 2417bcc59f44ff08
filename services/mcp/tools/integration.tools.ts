import { z } from 'zod';
import { generationAnswer, validationAnswer } from '../../integration/answers.ts';
import { generateTests } from '../../integration/app/generate-tests.ts';
import { projectReport } from '../../integration/app/project-report.ts';
import { validateComponent } from '../../integration/app/validate-component.ts';
import { generateInput, reportInput, validateInput } from '../../integration/input.ts';
import { defineTool, type Tool } from './tool.ts';

export const integrationValidateTool = defineTool({
  name: 'integration_validate',
  title: 'Validate a component against its expected behaviour',
  description:
    'Checks whether a component does what the sentences of expectedBehavior say, from its code in an indexed collection (definition and uses; collectionName left out: your only collection) and, with url, from the live page (found by test id, role and name, or text; visible, enabled, accessible name, what a click opens, navigates to or requests, axe accessibility). ' +
    'With url and only sentences about the page, no collection is needed. Each sentence is one check: passed, failed, or unknown when the evidence cannot decide it. valid is true when all pass, false when one fails, null when none fails but one is unknown, on the evidence only. With a language model configured, it may answer the unknown checks (decidedBy "model"): its answers make modelValid, never valid. Counts one query, plus one screenshotsAnalyzed with url.',
  input: validateInput,
  output: validationAnswer,
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  run: (args, ctx) => validateComponent(ctx.integration, ctx.caller, args, ctx.correlationId),
  render(r) {
    const verdict = r.valid === null ? 'undecided' : r.valid ? 'valid' : 'not valid';
    const lines = r.checks.map((c) => `- [${c.status}${c.decidedBy === 'model' ? ', by the model' : ''}] ${c.description}: ${c.detail}`);
    const code = r.evidence.filter((e) => e.role === 'definition').map((e) => `${e.file}:${e.startLine}-${e.endLine}`);
    const model =
      r.judgedByModel.length === 0
        ? ''
        : `; with the model's answers: ${r.modelValid === null ? 'undecided' : r.modelValid ? 'valid' : 'not valid'}`;
    return [
      `${r.component}: ${verdict} (confidence ${r.confidence})${model}${code.length > 0 ? `, defined at ${code.join(', ')}` : ''}`,
      ...lines,
      ...r.issues.map((i) => `issue: ${i}`),
    ].join('\n');
  },
});

export const integrationGenerateTool = defineTool({
  name: 'integration_generate',
  title: 'Generate tests for a component',
  description:
    'Writes runnable tests for a component: unit or integration (a mocha + chai, vitest, jest or node:test file importing its module, cases from its signature, examples, guards and branches) or e2e / visual (a Playwright test with the locators found on the live page at url; visual adds a screenshot assertion and its baseline PNG as base64, and neither needs a collection). ' +
    'coverage basic | comprehensive | exhaustive. Returns the files (path, content), the framework, the command to run them and the cases. Counts one query, plus one screenshotsAnalyzed for a page.',
  input: generateInput,
  output: generationAnswer,
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  run: (args, ctx) => generateTests(ctx.integration, ctx.caller, args, ctx.correlationId),
  render(r) {
    const files = r.files.filter((f) => f.encoding === undefined);
    return [
      `${r.cases.length} ${r.framework} cases for ${r.component} (${r.testType}, ${r.coverage}); run: ${r.runCommand}`,
      ...files.map((f) => `--- ${f.path}\n${f.content}`),
      ...r.files.filter((f) => f.encoding === 'base64').map((f) => `--- ${f.path} (binary, base64 in the structured result)`),
      ...r.skipped.map((s) => `not generated: ${s.reason}`),
    ].join('\n');
  },
});

export const integrationReportTool = defineTool({
  name: 'integration_report',
  title: 'Report on a project',
  description:
    'A report of your collections and their use: index runs (files, chunks, durations), queries (count, latency, cache hit rate), captures and analyses (findings by type and severity), visual test history, validations, generated tests and usage against quota. ' +
    'format json (the figures), markdown, or html (a self-contained page with charts). since limits it to what happened from then on. Counts nothing toward your quotas.',
  input: reportInput,
  output: z.object({
    success: z.literal(true),
    format: z.enum(['json', 'markdown', 'html']),
    report: z.record(z.string(), z.unknown()).optional().describe('The figures (format json).'),
    document: z.string().optional().describe('The markdown or html document.'),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
  run: async (args, ctx) => {
    const result = await projectReport(ctx.integration.rag, ctx.caller, args);
    return result.format === 'json'
      ? { success: true as const, format: 'json' as const, report: { ...result.body } }
      : { success: true as const, format: result.format, document: result.body };
  },
  render: (r) => (r.document !== undefined ? r.document : JSON.stringify(r.report, null, 2)),
});

export const INTEGRATION_TOOLS: readonly Tool[] = [integrationValidateTool, integrationGenerateTool, integrationReportTool];
