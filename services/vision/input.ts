import { z } from 'zod';
import { ANALYSIS_TYPES, SEVERITIES } from './analysis/types.ts';

/**
 * Request bodies of the vision operations, validated into typed input (pure). The descriptions are
 * what an MCP client's model reads to call the glm_* tools right.
 */

const pageUrl = z
  .string({ error: 'url is required' })
  .min(1, { error: 'url is required' })
  .max(8192, { error: 'url is at most 8192 characters' })
  .regex(/^https?:\/\//i, { error: 'url must be an http:// or https:// URL' })
  .describe('The page to load: http(s) only. Private, loopback and metadata addresses are refused, on every request the page makes.');

/** Masked selectors per visual check: each is one more locator the browser resolves at the capture. */
export const MAX_MASKS = 20;

const selector = z.string().min(1).max(1000, { error: 'selector is at most 1000 characters' });

const viewport = z
  .object({
    width: z
      .number({ error: 'viewport width must be a number' })
      .int({ error: 'viewport width must be whole' })
      .min(16, { error: 'viewport width is 16-4096' })
      .max(4096, { error: 'viewport width is 16-4096' }),
    height: z
      .number({ error: 'viewport height must be a number' })
      .int({ error: 'viewport height must be whole' })
      .min(16, { error: 'viewport height is 16-4096' })
      .max(4096, { error: 'viewport height is 16-4096' }),
  })
  .describe('Browser window size in CSS pixels (default 1280x800).');

/** Most viewports one suite runs its checks at: every viewport is a page load and its captures. */
export const MAX_SUITE_VIEWPORTS = 4;

const suiteViewport = viewport
  .extend({
    name: z
      .string({ error: 'each of testSuite.viewports needs a name' })
      .regex(/^[A-Za-z0-9_.-]{1,32}$/, { error: 'a viewport name is 1-32 of A-Z a-z 0-9 _ . -' })
      .describe('Names the viewport in results and baselines ("mobile", "desktop-dark").'),
    deviceScaleFactor: z
      .number({ error: 'deviceScaleFactor must be a number' })
      .min(1, { error: 'deviceScaleFactor is 1-3' })
      .max(3, { error: 'deviceScaleFactor is 1-3' })
      .default(1)
      .describe('Device pixels per CSS pixel (2 for most phones); the capture is that many times larger each way.'),
    colorScheme: z
      .enum(['light', 'dark'], { error: 'colorScheme is light or dark' })
      .default('light')
      .describe('prefers-color-scheme of the page.'),
  })
  .describe('One viewport of the suite: its size in CSS pixels, device scale factor and colour scheme.');

export type SuiteViewport = z.infer<typeof suiteViewport>;

const waitFor = z
  .union([z.enum(['load', 'domcontentloaded', 'networkidle']), z.object({ selector })], {
    error: 'waitFor is load, domcontentloaded, networkidle or {selector}',
  })
  .describe('When the page counts as ready: a load state (default load) or {selector} to wait for an element to be visible.');

export const captureInput = z.object({
  url: pageUrl,
  selector: selector.optional().describe('Screenshot only the first element matching this CSS selector.'),
  fullPage: z
    .boolean({ error: 'fullPage must be a boolean' })
    .default(false)
    .describe('Capture the whole scrollable page instead of the viewport.'),
  viewport: viewport.optional(),
  waitFor: waitFor.optional(),
});

export const analyzeInput = z
  .object({
    screenshotId: z.string().min(1).max(64).optional().describe('A screenshot of yours, from a capture.'),
    screenshotUrl: z
      .string()
      .min(1)
      .max(8192)
      .regex(/^https?:\/\//i, { error: 'screenshotUrl must be an http(s) URL' })
      .optional()
      .describe('A screenshot URL this service returned (analysed with its page data), or any image URL (image-level checks only).'),
    url: pageUrl.optional().describe('A page to capture now and analyse.'),
    analysisType: z
      .enum(ANALYSIS_TYPES, { error: `analysisType must be one of ${ANALYSIS_TYPES.join(', ')}` })
      .describe(
        'ui-elements: interactive elements with role, name, selector and box; layout: overlaps, overflow, off-screen, small tap targets, misalignment; ' +
          'accessibility: axe-core violations incl. contrast; visual-bugs: broken images, clipped text, overlaps, blank regions, difference from a baseline; comprehensive: all.',
      ),
    baselineScreenshotId: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe('visual-bugs: compare pixel by pixel with this earlier screenshot of yours.'),
    fullPage: z.boolean().default(false).describe('With url: capture the whole page.'),
    viewport: viewport.optional(),
    collectionName: z
      .string()
      // The rag context's rule for a collection's name (services/rag/input.ts); vision does not import rag.
      .regex(/^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}$/, { error: 'collectionName must be 1-64 of A-Z a-z 0-9 _ . -, not starting with a dot' })
      .optional()
      .describe(
        'A collection of your code: each finding that names an element gets `code`, the files most likely to render it. ' +
          'Without it, your only collection is used; with several, none (the answer says why).',
      ),
  })
  .refine((v) => [v.screenshotId, v.screenshotUrl, v.url].filter((x) => x !== undefined).length === 1, {
    error: 'give exactly one of screenshotId, screenshotUrl or url',
  });

const checkName = z
  .string({ error: 'each check needs a name' })
  .regex(/^[A-Za-z0-9_.-]{1,64}$/, { error: 'check names are 1-64 of A-Z a-z 0-9 _ . -' });

export const testCheck = z.discriminatedUnion(
  'type',
  [
    z.object({
      type: z.literal('visual'),
      name: checkName,
      selector: selector.optional(),
      fullPage: z.boolean().default(false),
      maxDiffRatio: z
        .number()
        .min(0)
        .max(1)
        .default(0.001)
        .describe('Largest share of pixels that may differ from the baseline (default 0.001).'),
      pixelThreshold: z
        .number()
        .min(0)
        .max(1)
        .default(0.1)
        .describe('How different a pixel must be to count (pixelmatch threshold, default 0.1).'),
      maxDiffPixels: z
        .number()
        .int({ error: 'maxDiffPixels must be whole' })
        .min(0, { error: 'maxDiffPixels is 0 or more' })
        .optional()
        .describe('Largest number of pixels that may differ, beside maxDiffRatio: both must hold.'),
      mask: z
        .array(selector)
        .max(MAX_MASKS, { error: `mask is at most ${MAX_MASKS} selectors` })
        .optional()
        .describe(
          'CSS selectors whose boxes are painted over (magenta) in the capture, so what changes there (dates, ads, avatars) never counts. ' +
            'The mask is part of the capture, its baseline included: a check whose mask changes needs its new capture accepted as the baseline.',
        ),
    }),
    z.object({
      type: z.literal('element'),
      name: checkName,
      selector,
      visible: z.boolean().default(true).describe('Must be visible (default) or must not be.'),
      text: z.string().max(1000).optional().describe('Text the element must contain.'),
    }),
    z.object({
      type: z.literal('a11y'),
      name: checkName,
      maxImpact: z
        .enum(['none', ...SEVERITIES])
        .default('moderate')
        .describe('Worst axe-core impact allowed (none: any violation fails; default moderate).'),
    }),
    z.object({
      type: z.literal('layout'),
      name: checkName,
      rules: z
        .array(z.enum(['overlap', 'viewport-overflow', 'container-overflow', 'off-screen', 'small-tap-target', 'misaligned']))
        .min(1)
        .optional()
        .describe('Layout findings that fail the check (default all).'),
    }),
  ],
  { error: 'each check has a type: visual, element, a11y or layout' },
);

/** Steps before a suite's captures: enough to pass a log-in form or open a menu. */
export const MAX_STEPS = 20;

const step = z.discriminatedUnion(
  'action',
  [
    z.object({ action: z.literal('click'), selector }),
    z.object({
      action: z.literal('fill'),
      selector,
      value: z.string().max(10_000).describe('Typed into the field; never recorded in events or logs.'),
    }),
    z.object({ action: z.literal('press'), selector, key: z.string().min(1).max(64).describe('A key name, e.g. Enter or Escape.') }),
    z.object({ action: z.literal('waitFor'), selector }),
    z.object({ action: z.literal('scroll'), selector: selector.optional(), y: z.number().int().min(0).max(1_000_000).optional() }),
  ],
  { error: 'each step has an action: click, fill, press, waitFor or scroll' },
);

export type CaptureStep = z.infer<typeof step>;

const cookie = z.object({
  name: z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/, { error: 'a cookie name is 1-128 token characters' }),
  value: z
    .string()
    .max(4096)
    .regex(/^[^;\r\n]*$/, { error: 'a cookie value has no ; or line breaks' }),
});

export const testSuiteInput = z
  .object({
    name: z
      .string({ error: 'testSuite.name is required' })
      .regex(/^[A-Za-z0-9_.-]{1,64}$/, { error: 'testSuite.name is 1-64 of A-Z a-z 0-9 _ . -' }),
    viewport: viewport.optional(),
    viewports: z
      .array(suiteViewport, { error: 'testSuite.viewports must be an array of viewports' })
      .min(1, { error: 'testSuite.viewports is empty' })
      .max(MAX_SUITE_VIEWPORTS, { error: `at most ${MAX_SUITE_VIEWPORTS} viewports per suite` })
      .refine((list) => new Set(list.map((v) => v.name)).size === list.length, { error: 'testSuite.viewports names must differ' })
      .optional()
      .describe(
        'Run every check at each of these viewports, each with its own baselines (results are named check@viewport); instead of viewport.',
      ),
    steps: z
      .array(step)
      .max(MAX_STEPS, { error: `at most ${MAX_STEPS} steps` })
      .optional()
      .describe(
        'Done in order on the loaded page before every capture of the suite (click, fill, press, waitFor, scroll); each page or request they cause passes the same address guard as the page.',
      ),
    cookies: z
      .array(cookie)
      .max(20, { error: 'at most 20 cookies' })
      .optional()
      .describe("Cookies set for the page's own site before it loads (a session, a consent)."),
    localStorage: z
      .record(z.string().max(256), z.string().max(10_000))
      .refine((items) => Object.keys(items).length <= 50, { error: 'at most 50 localStorage items' })
      .optional()
      .describe("localStorage items of the page's own origin, set before its scripts run."),
    checks: z
      .array(testCheck, { error: 'testSuite.checks must be an array of checks' })
      .min(1, { error: 'testSuite.checks is empty' })
      .max(20, { error: 'at most 20 checks per suite' }),
  })
  .refine((suite) => !(suite.viewport && suite.viewports), { error: 'give testSuite.viewport or testSuite.viewports, not both' });

export const testInput = z.object({
  url: pageUrl,
  testSuite: testSuiteInput.describe(
    'A named list of checks: visual (against a baseline), element (exists/visible/text), a11y (maximum impact), layout (rules).',
  ),
});

export type CaptureInput = z.infer<typeof captureInput>;
export type AnalyzeInput = z.infer<typeof analyzeInput>;
export type TestCheck = z.infer<typeof testCheck>;
export type TestInput = z.infer<typeof testInput>;
