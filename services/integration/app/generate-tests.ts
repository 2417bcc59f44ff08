import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { newEvent } from '../../../events/envelope.ts';
import { publishAndApply } from '../../../events/own-events.ts';
import { indexedCollection } from '../../rag/app/indexed-collection.ts';
import { checkQuota, meter } from '../../rag/app/meter.ts';
import { ragError, type Caller } from '../../rag/caller.ts';
import type { RagCollection } from '../../rag/collections.projection.ts';
import type { SearchHit } from '../../rag/retrieval.ts';
import { readProjectFile } from '../code/project-files.ts';
import type { TestsGenerated } from '../events.ts';
import { playwrightTests } from '../generate/e2e/playwright-spec.ts';
import type { GeneratedTests } from '../generate/generated.ts';
import { detectFramework, moduleSystemOf } from '../generate/project-setup.ts';
import { GenerateError, generateUnitTests } from '../generate/unit/generate-unit-tests.ts';
import { generationsProjection } from '../generations.projection.ts';
import type { GenerateInput } from '../input.ts';
import { examinePage } from '../page/examine-page.ts';
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

const GENERATE_STATUS: Record<GenerateError['code'], number> = { COMPONENT_NOT_FOUND: 404, NOT_SUPPORTED: 422, NO_CASES: 422 };

/**
 * POST /api/integration/generate and the `integration_generate` tool: runnable tests for a component.
 * unit / integration: a test file for its module, from its real signature and the branches the parser
 * sees (services/integration/generate/unit); e2e / visual: a Playwright test from the live page.
 * Uses one `queries` and, for a page, one `screenshotsAnalyzed` once the page loaded.
 */
export async function generateTests(deps: IntegrationDeps, caller: Caller, input: GenerateInput, correlationId: string): Promise<GenerateAnswer> {
  const started = performance.now();
  const browserTest = input.testType === 'e2e' || input.testType === 'visual';
  if (browserTest && !input.url) throw ragError(400, 'BAD_REQUEST', `url is required for testType ${input.testType}: the page the component is on`);
  if (browserTest && input.framework !== undefined && input.framework !== 'playwright') throw ragError(400, 'BAD_REQUEST', `testType ${input.testType} generates Playwright tests: leave framework out or set it to playwright`);
  if (!browserTest && input.framework === 'playwright') throw ragError(400, 'BAD_REQUEST', `testType ${input.testType} generates mocha, vitest, jest or node:test tests, not playwright`);
  const collection = await indexedCollection(deps.rag, caller, input.collectionName);
  if (browserTest) checkQuota(deps.rag, caller, 'screenshotsAnalyzed', 1);
  await meter(deps.rag, caller, 'queries', 1, correlationId);

  let tests: GeneratedTests;
  let source: GenerateAnswer['source'] = null;
  if (browserTest) {
    const facts = await examinePage(deps.vision, input.url as string, { component: input.component, click: input.coverage !== 'basic', a11y: false, screenshot: input.testType === 'visual' });
    await meter(deps.rag, caller, 'screenshotsAnalyzed', 1, correlationId);
    if (!facts.located) throw ragError(422, 'COMPONENT_NOT_ON_PAGE', `${input.component} was not found on ${facts.finalUrl} (tried: ${facts.tried.join('; ')})`);
    tests = playwrightTests({ component: input.component, testType: input.testType as 'e2e' | 'visual', coverage: input.coverage, facts });
  } else {
    const found = await moduleOf(deps, collection, input.component);
    source = { file: found.definition.metadata.file, startLine: found.definition.metadata.startLine, endLine: found.definition.metadata.endLine };
    const packageJson = await readProjectFile(deps.rag, collection, 'package.json');
    const framework = input.framework ?? detectFramework(packageJson);
    try {
      tests = await generateUnitTests({
        component: input.component,
        source: found.source,
        modulePath: found.definition.metadata.file,
        testType: input.testType as 'unit' | 'integration',
        coverage: input.coverage,
        framework: framework as 'mocha' | 'vitest' | 'jest' | 'node:test',
        moduleSystem: moduleSystemOf(packageJson, found.definition.metadata.file, found.source),
        usages: input.testType === 'integration' ? found.usages : [],
      });
    } catch (err) {
      if (err instanceof GenerateError) throw ragError(GENERATE_STATUS[err.code], err.code, err.message);
      throw err;
    }
  }

  const generationId = randomUUID();
  const event: TestsGenerated = newEvent(
    'integration.tests-generated',
    {
      generationId,
      customerId: caller.customerId,
      keyHash: caller.keyHash,
      component: input.component,
      collectionName: input.collectionName,
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

/** The component's definition, its module's text, and the files that use it. */
async function moduleOf(deps: IntegrationDeps, collection: RagCollection, component: string): Promise<{ definition: SearchHit; source: string; usages: Array<{ path: string; source: string }> }> {
  const { definitions, mentions } = await deps.rag.retrieval.lookup(collection.collectionId, component, 20);
  // A JavaScript or TypeScript definition: the generator's languages.
  const definition = definitions.find((d) => /^(typescript|tsx|javascript)$/.test(d.metadata.language));
  if (!definition) {
    const elsewhere = definitions[0];
    throw elsewhere
      ? ragError(422, 'NOT_SUPPORTED', `${component} is defined in ${elsewhere.metadata.file} (${elsewhere.metadata.language}); unit tests are generated for JavaScript and TypeScript`)
      : ragError(404, 'COMPONENT_NOT_FOUND', `no definition of ${component} in collection ${collection.collectionName}: index the project, or check the name`);
  }
  const source = await readProjectFile(deps.rag, collection, definition.metadata.file);
  if (source === null) throw ragError(409, 'SOURCE_GONE', `${definition.metadata.file} is in the index but no longer in the project: index it again`);
  const usages: Array<{ path: string; source: string }> = [];
  for (const path of [...new Set(mentions.map((m) => m.metadata.file))].filter((p) => p !== definition.metadata.file).slice(0, MAX_USAGE_FILES)) {
    const text = await readProjectFile(deps.rag, collection, path);
    if (text !== null) usages.push({ path, source: text });
  }
  return { definition, source, usages };
}
