import { z } from 'zod';
import { COLLECTION_NAME } from '../rag/input.ts';

/**
 * Request bodies of the integration operations, validated into typed input (pure). The descriptions
 * are what an MCP client's model reads to call the integration_* tools right.
 */

const component = z
  .string({ error: 'component is required' })
  .min(1, { error: 'component is required' })
  .max(200, { error: 'component is at most 200 characters' })
  .describe('The component to look at: its name in the code (AddToCartButton, formatPrice), as defined in the indexed project.');

const collectionName = z
  .string({ error: 'collectionName must be a string' })
  .regex(COLLECTION_NAME, { error: 'collectionName must be 1-64 of A-Z a-z 0-9 _ . -, not starting with a dot' });

const pageUrl = z
  .string({ error: 'url must be a string' })
  .max(8192, { error: 'url is at most 8192 characters' })
  .regex(/^https?:\/\//i, { error: 'url must be an http:// or https:// URL' })
  .describe('A live page that shows the component: it is loaded in the guarded browser and the component is found and exercised there.');

export const validateInput = z.object({
  component,
  expectedBehavior: z
    .string({ error: 'expectedBehavior is required' })
    .min(1, { error: 'expectedBehavior is required' })
    .max(4000, { error: 'expectedBehavior is at most 4000 characters' })
    .describe(
      'What the component should do, in sentences; each sentence becomes one check ("It is visible. Clicking it opens the Added to cart dialog. It posts to /api/cart.").',
    ),
  context: z
    .string({ error: 'context must be a string' })
    .max(4000, { error: 'context is at most 4000 characters' })
    .optional()
    .describe('Anything else that helps: where it is used, what it depends on.'),
  collectionName: collectionName
    .optional()
    .describe(
      "The indexed collection that holds the component's code. Left out: your only collection; none is needed when url is given and every sentence is about the page; with several collections, name one whenever the code is needed (no url, or a sentence about what it throws or takes).",
    ),
  url: pageUrl.optional(),
});

export const TEST_TYPES = ['unit', 'integration', 'e2e', 'visual'] as const;
export const COVERAGES = ['basic', 'comprehensive', 'exhaustive'] as const;
export const FRAMEWORKS = ['mocha', 'vitest', 'jest', 'node:test', 'playwright'] as const;
export type Framework = (typeof FRAMEWORKS)[number];

export const generateInput = z.object({
  component,
  testType: z
    .enum(TEST_TYPES, { error: 'testType is unit, integration, e2e or visual' })
    .describe("unit / integration: a test file for the component's module; e2e / visual: a Playwright test against the live page at url."),
  coverage: z
    .enum(COVERAGES, { error: 'coverage is basic, comprehensive or exhaustive' })
    .default('basic')
    .describe(
      'basic: the happy path; comprehensive: plus the boundaries and errors in the code; exhaustive: plus every branch the parser can see.',
    ),
  collectionName: collectionName
    .optional()
    .describe(
      "The indexed collection that holds the component's code, for unit and integration tests. Left out: your only collection; e2e and visual tests need none.",
    ),
  url: pageUrl.optional(),
  framework: z
    .enum(FRAMEWORKS, { error: 'framework is mocha, vitest, jest, node:test or playwright' })
    .optional()
    .describe("Default: the project's own (from its package.json), else mocha + chai; playwright for e2e and visual."),
});

export const REPORT_FORMATS = ['json', 'markdown', 'html'] as const;

export const reportInput = z.object({
  projectName: z
    .string({ error: 'projectName is required' })
    .min(1, { error: 'projectName is required' })
    .max(200, { error: 'projectName is at most 200 characters' })
    .describe("The report's title."),
  collectionName: collectionName.optional().describe("Only this collection's indexing and queries (default: all your collections)."),
  includeMetrics: z
    .boolean({ error: 'includeMetrics must be a boolean' })
    .default(true)
    .describe('Indexing, query, vision and usage figures (default true).'),
  since: z.iso
    .datetime({ offset: true, error: 'since must be an ISO 8601 date-time (2026-11-01T00:00:00Z)' })
    .optional()
    .describe('Only what happened at or after this moment.'),
  format: z
    .enum(REPORT_FORMATS, { error: 'format is json, markdown or html' })
    .default('json')
    .describe('json: the figures; markdown; html: a self-contained page with charts.'),
});

export type ValidateInput = z.infer<typeof validateInput>;
export type GenerateInput = z.infer<typeof generateInput>;
export type ReportInput = z.infer<typeof reportInput>;
