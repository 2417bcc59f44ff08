import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { newEvent } from '../../../events/envelope.ts';
import { publishAndApply } from '../../../events/own-events.ts';
import { HttpError, unavailable } from '../../platform/http/errors.ts';
import { WorkBudgetError, WorkPoolClosed, WorkQueueFull } from '../../platform/work/work-pool.ts';
import { indexedCollection } from '../../rag/app/indexed-collection.ts';
import { checkQuota, meter } from '../../premium/meter.ts';
import { ragError, type Caller } from '../../premium/caller.ts';
import type { RagCollection } from '../../rag/collections.projection.ts';
import type { SearchHit } from '../../rag/retrieval.ts';
import { readProjectFile } from '../code/project-files.ts';
import type { TestsGenerated } from '../events.ts';
import { playwrightTests } from '../generate/e2e/playwright-spec.ts';
import type { GeneratedTests } from '../generate/generated.ts';
import type { GenerateErrorCode } from '../generate/unit/generate-error.ts';
import { GENERATE_TESTS, type GenerateTaskInput, type GenerateTaskOutput } from '../generate/unit/generate.task.ts';
import type { UnitTestResult } from '../generate/unit/generate-unit-tests.ts';
import { generationsProjection } from '../generations.projection.ts';
import type { GenerateInput } from '../input.ts';
import { examinePage } from '../page/examine-page.ts';
import { requiredCollection } from './code-collection.ts';
import type { IntegrationDeps } from './deps.ts';

export interface GenerateAnswer extends GeneratedTests {
  success: true;
  generationId: string;
  component: string;
  testType: GenerateInput['testType'];
  coverage: GenerateInput['coverage'];
  /** Where the component's code was found (unit and integration tests). */
  source: { file: string; startLine: number; endLine: number } | null;
}

/** Files that use the component, read for the calls an integration test repeats. */
const MAX_USAGE_FILES = 10;

const GENERATE_STATUS: Record<GenerateErrorCode, number> = { COMPONENT_NOT_FOUND: 404, NOT_SUPPORTED: 422, NO_CASES: 422 };

/**
 * POST /api/integration/generate and the `integration_generate` tool: runnable tests for a component.
 * unit / integration: a test file for its module, from its real signature and the branches the parser
 * sees (services/integration/generate/unit), on the generation pool's worker thread once the files
 * are read; e2e / visual: a Playwright test from the live page, which needs no collection. Without
 * collectionName, unit and integration read the caller's only collection
 * (services/integration/app/code-collection.ts).
 * Uses one `queries` and, for a page, one `screenshotsAnalyzed` once the page loaded.
 */
export async function generateTests(
  deps: IntegrationDeps,
  caller: Caller,
  input: GenerateInput,
  correlationId: string,
): Promise<GenerateAnswer> {
  const started = performance.now();
  const browserTest = input.testType === 'e2e' || input.testType === 'visual';
  if (browserTest && !input.url)
    throw ragError(400, 'BAD_REQUEST', `url is required for testType ${input.testType}: the page the component is on`);
  if (browserTest && input.framework !== undefined && input.framework !== 'playwright')
    throw ragError(
      400,
      'BAD_REQUEST',
      `testType ${input.testType} generates Playwright tests: leave framework out or set it to playwright`,
    );
  if (!browserTest && input.framework === 'playwright')
    throw ragError(400, 'BAD_REQUEST', `testType ${input.testType} generates mocha, vitest, jest or node:test tests, not playwright`);
  // null for a page's test, which reads no code; a collection named there anyway must still be the caller's.
  const collection = browserTest ? null : await requiredCollection(deps.rag, caller, input.collectionName, WITHOUT_CODE);
  if (browserTest && input.collectionName !== undefined) await indexedCollection(deps.rag, caller, input.collectionName);
  if (browserTest) checkQuota(deps.rag, caller, 'screenshotsAnalyzed', 1);
  await meter(deps.rag, caller, 'queries', 1, correlationId);

  let tests: GeneratedTests;
  let source: GenerateAnswer['source'] = null;
  if (collection === null) {
    const facts = await examinePage(
      deps.vision,
      input.url as string,
      { component: input.component, click: input.coverage !== 'basic', a11y: false, screenshot: input.testType === 'visual' },
      caller.customerId,
    );
    await meter(deps.rag, caller, 'screenshotsAnalyzed', 1, correlationId);
    if (!facts.located)
      throw ragError(
        422,
        'COMPONENT_NOT_ON_PAGE',
        `${input.component} was not found on ${facts.finalUrl} (tried: ${facts.tried.join('; ')})`,
      );
    tests = playwrightTests({ component: input.component, testType: input.testType as 'e2e' | 'visual', coverage: input.coverage, facts });
  } else {
    const found = await moduleOf(deps, collection, input.component);
    source = {
      file: found.definition.metadata.file,
      startLine: found.definition.metadata.startLine,
      endLine: found.definition.metadata.endLine,
    };
    const packageJson = await readProjectFile(deps.rag, collection, 'package.json');
    tests = await generateOffLoop(deps, caller, {
      component: input.component,
      source: found.source,
      modulePath: found.definition.metadata.file,
      packageJson,
      ...(input.framework !== undefined ? { framework: input.framework as 'mocha' | 'vitest' | 'jest' | 'node:test' } : {}),
      testType: input.testType as 'unit' | 'integration',
      coverage: input.coverage,
      usages: input.testType === 'integration' ? found.usages : [],
    });
  }

  const generationId = randomUUID();
  const event: TestsGenerated = newEvent(
    'integration.tests-generated',
    {
      generationId,
      customerId: caller.customerId,
      keyHash: caller.keyHash,
      component: input.component,
      collectionName: collection?.collectionName ?? input.collectionName ?? null,
      url: input.url ?? null,
      testType: input.testType,
      coverage: input.coverage,
      framework: tests.framework,
      files: tests.files.length,
      cases: tests.cases.length,
      durationMs: Math.round(performance.now() - started),
    },
    { correlationId },
  );
  await publishAndApply(deps.rag.publisher, deps.rag.db, generationsProjection, [event]);
  return { success: true, generationId, component: input.component, testType: input.testType, coverage: input.coverage, source, ...tests };
}

const WITHOUT_CODE = 'or generate e2e or visual tests from the live page (with url), which need no code';

/**
 * Parsing, planning, solving and rendering on the generation pool: their cost grows with what the
 * customer's module holds (a few hundred unsolvable guards keep the solver busy for seconds), so
 * they never run on the loop that answers everyone's requests. Over its budget: 422; the customer's
 * queue full: 429; the pool stopping: 503.
 */
async function generateOffLoop(deps: IntegrationDeps, caller: Caller, input: GenerateTaskInput): Promise<UnitTestResult> {
  let outcome: GenerateTaskOutput;
  try {
    outcome = await deps.generation.run(GENERATE_TESTS, input, { tenant: caller.customerId });
  } catch (err) {
    if (err instanceof WorkBudgetError) throw tooCostly(err);
    if (err instanceof WorkQueueFull)
      throw new HttpError(429, 'TOO_BUSY', 'too many of your test generations are waiting; try again shortly', {
        headers: { 'Retry-After': '5' },
      });
    if (err instanceof WorkPoolClosed) throw unavailable('test generation is stopping on this server; retry shortly');
    throw err;
  }
  if (!outcome.ok) throw ragError(GENERATE_STATUS[outcome.code], outcome.code, outcome.message);
  return outcome.tests;
}

function tooCostly(err: WorkBudgetError): HttpError {
  if (err.budget === 'crash')
    return ragError(422, 'GENERATION_FAILED', 'generating tests for this code stopped the worker it ran on; nothing was generated');
  return ragError(
    422,
    'GENERATION_TOO_COSTLY',
    `generating tests for this code ran past its ${err.budget} budget: generate for a smaller module, or at a lower coverage`,
  );
}

/** The component's definition, its module's text, and the files that use it. */
async function moduleOf(
  deps: IntegrationDeps,
  collection: RagCollection,
  component: string,
): Promise<{ definition: SearchHit; source: string; usages: Array<{ path: string; source: string }> }> {
  const { definitions, mentions } = await deps.rag.retrieval.lookup(collection.collectionId, component, 20);
  // A JavaScript or TypeScript definition: the generator's languages.
  const definition = definitions.find((d) => /^(typescript|tsx|javascript)$/.test(d.metadata.language));
  if (!definition) {
    const elsewhere = definitions[0];
    throw elsewhere
      ? ragError(
          422,
          'NOT_SUPPORTED',
          `${component} is defined in ${elsewhere.metadata.file} (${elsewhere.metadata.language}); unit tests are generated for JavaScript and TypeScript`,
        )
      : ragError(
          404,
          'COMPONENT_NOT_FOUND',
          `no definition of ${component} in collection ${collection.collectionName}: index the project, or check the name`,
        );
  }
  const source = await readProjectFile(deps.rag, collection, definition.metadata.file);
  if (source === null)
    throw ragError(409, 'SOURCE_GONE', `${definition.metadata.file} is in the index but no longer in the project: index it again`);
  const usages: Array<{ path: string; source: string }> = [];
  for (const path of [...new Set(mentions.map((m) => m.metadata.file))]
    .filter((p) => p !== definition.metadata.file)
    .slice(0, MAX_USAGE_FILES)) {
    const text = await readProjectFile(deps.rag, collection, path);
    if (text !== null) usages.push({ path, source: text });
  }
  return { definition, source, usages };
}
