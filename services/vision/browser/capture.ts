import { errors, type Page } from 'playwright-core';
import type { BrowserPool } from './browser-pool.ts';
import { CaptureError, isCaptureError } from './capture-error.ts';
import { collectElements, type ElementBox } from './page-elements.ts';
import type { BlockedRequest, ContextViewport, GuardedContext } from './guarded-context.ts';
import { openIsolatedWorld, type IsolatedWorld } from './isolated-world.ts';
import { pngSize } from './png-size.ts';
import { urlTarget } from './ssrf-guard.ts';

/**
 * One capture of a customer's page: screenshot, serialized DOM, aria snapshot and (optionally) the
 * boxes of its visible landmarks and controls, in a fresh guarded context of the pool. Every step
 * runs against one deadline (`timeoutMs`, waiting for a browser slot included).
 */

export type WaitFor = 'load' | 'domcontentloaded' | 'networkidle' | { readonly selector: string };

export interface CaptureRequest {
  /** http(s) only; checked against the SSRF policy, as is every request the page then makes. */
  readonly url: string;
  /** Screenshot only this element (the first match); SELECTOR_NOT_FOUND when there is none visible. */
  readonly selector?: string;
  readonly fullPage?: boolean;
  /** Default 1280×800. */
  /** Default 1280×800 CSS pixels, scale 1, light; the screenshot is deviceScaleFactor times larger each way. */
  readonly viewport?: ContextViewport;
  /** Default 'load'. */
  readonly waitFor?: WaitFor;
  /** Whole capture, queueing included. */
  readonly timeoutMs: number;
  /** Whose capture (a customer id): browser slots are shared round-robin between customers. */
  readonly tenant?: string;
  /** Page weight: bytes received from the network, after which further requests are refused. */
  readonly maxBytes: number;
  /** DOM and aria snapshot are cut at this many characters (default 2 000 000). */
  readonly maxDomChars?: number;
  /** A full-page screenshot is clipped to this many pixels; an element larger is TOO_LARGE (default 1280×16384). */
  readonly maxScreenshotPixels?: number;
  /** A PNG larger than this is TOO_LARGE (default 25 MB). */
  readonly maxScreenshotBytes?: number;
  /** Also return the boxes of visible headings, links, controls, images and landmarks. */
  readonly elements?: boolean;
  /**
   * Settle before the screenshot: web fonts loaded, the network quiet (briefly), then screenshots
   * until two in a row are identical (at most STABLE_ATTEMPTS), as Playwright's toHaveScreenshot.
   */
  readonly stable?: boolean;
  /** Before the page loads: cookies and localStorage of its own site; after it loads, steps, in order. */
  readonly prepare?: CapturePreparation;
  /** Elements painted over (MASK_COLOR) in the screenshot: every element each selector matches. */
  readonly mask?: readonly string[];
}

/** A step done on the loaded page before the screenshot. */
export type CaptureStep =
  | { readonly action: 'click'; readonly selector: string }
  | { readonly action: 'fill'; readonly selector: string; readonly value: string }
  | { readonly action: 'press'; readonly selector: string; readonly key: string }
  | { readonly action: 'waitFor'; readonly selector: string }
  | { readonly action: 'scroll'; readonly selector?: string | undefined; readonly y?: number | undefined };

export interface CapturePreparation {
  readonly cookies?: readonly { readonly name: string; readonly value: string }[];
  readonly localStorage?: Readonly<Record<string, string>>;
  readonly steps?: readonly CaptureStep[];
}

/** Playwright's own default mask colour: a region no real page paints in. */
export const MASK_COLOR = '#FF00FF';

/**
 * Runs in the capture's page after the screenshot, before the context closes: what the analyses
 * need from the live page (axe, element facts, probes of a test suite), against the same deadline.
 */
export type PageInspector<T> = (page: Page, left: () => number) => Promise<T>;

export interface CaptureResult {
  readonly png: Buffer;
  /** Of the PNG, in device pixels (CSS pixels times the viewport's deviceScaleFactor, 1 by default). */
  readonly width: number;
  readonly height: number;
  readonly title: string;
  readonly finalUrl: string;
  /** HTTP status of the main document; null when there was no HTTP response (same-document navigation). */
  readonly status: number | null;
  /** Serialized HTML (doctype + outerHTML, as page.content()), cut at maxDomChars. */
  readonly dom: string;
  /** Playwright's aria snapshot of the page (YAML: role "name" [attributes] per line), cut at maxDomChars. */
  readonly accessibility: string;
  readonly elements?: readonly ElementBox[];
  /** Requests and connections refused by the SSRF policy or the page-weight limit (first 200). */
  readonly blockedRequests: readonly BlockedRequest[];
  readonly blockedCount: number;
  readonly bytesReceived: number;
  readonly pageWeightExceeded: boolean;
  readonly truncated: { readonly dom: boolean; readonly accessibility: boolean; readonly screenshot: boolean };
  readonly capturedAt: string;
  /** With `stable`: how many screenshots were taken, and whether the last two were identical. */
  readonly stability?: { readonly attempts: number; readonly stable: boolean };
}

/** How long one step waits for its element (and a navigation it starts) at most. */
export const STEP_TIMEOUT_MS = 5000;

/** Screenshots a stable capture takes at most before it settles for the last one, unstable. */
export const STABLE_ATTEMPTS = 5;
/** How long a stable capture waits for the network to go quiet; a page that polls never does. */
const NETWORK_QUIET_MS = 2000;

const WAIT_STATES: readonly unknown[] = ['load', 'domcontentloaded', 'networkidle'];
const DEFAULT_VIEWPORT = { width: 1280, height: 800 } as const;
const MAX_SIDE = 8192;

export async function capture(pool: BrowserPool, request: CaptureRequest): Promise<CaptureResult>;
export async function capture<T>(
  pool: BrowserPool,
  request: CaptureRequest,
  inspect: PageInspector<T>,
): Promise<CaptureResult & { readonly inspection: T }>;
export async function capture<T>(
  pool: BrowserPool,
  request: CaptureRequest,
  inspect?: PageInspector<T>,
): Promise<CaptureResult & { readonly inspection?: T }> {
  const started = Date.now();
  validate(request);
  // Cheap refusals (file:, javascript:, a private IP literal...) before taking a browser slot; the
  // complete check, with DNS, is the context's own, on this and every later request.
  // Without them, a refusal waited behind the captures in progress for a slot (1.1 s in npm run fuzz).
  const target = urlTarget(request.url, ['http:', 'https:']);
  const early = 'reason' in target ? target.reason : pool.refusalWithoutDns(target);
  if (early !== undefined) throw new CaptureError('BLOCKED_URL', `${request.url.slice(0, 200)}: ${early}`);
  const viewport = request.viewport ?? DEFAULT_VIEWPORT;
  const deadline = started + request.timeoutMs;
  return pool.run(
    { deadline, maxBytes: request.maxBytes, viewport, ...(request.tenant !== undefined ? { tenant: request.tenant } : {}) },
    async (lease) => {
      const verdict = await lease.guard.checkUrl(request.url, ['http:', 'https:']);
      if (!verdict.allowed) throw new CaptureError('BLOCKED_URL', `${request.url.slice(0, 200)}: ${verdict.reason}`);
      await beforeLoad(lease, request);
      const page = await lease.context.newPage();
      // Pop-ups of the page are not what was asked for, and would compete for the capture's time.
      lease.context.on('page', (other) => void (other !== page && other.close().catch(() => undefined)));
      const left = () => {
        const ms = deadline - Date.now();
        if (ms <= 0) throw new CaptureError('TIMEOUT', `the capture did not finish within ${request.timeoutMs} ms`);
        return ms;
      };
      try {
        const result = await captureIn(page, lease, request, left);
        if (!inspect) return result;
        return { ...result, inspection: await inspect(page, left) };
      } catch (error) {
        throw classify(error, lease, request);
      }
    },
  );
}

async function captureIn(page: Page, lease: GuardedContext, request: CaptureRequest, left: () => number): Promise<CaptureResult> {
  const waitFor = request.waitFor ?? 'load';
  const response = await page.goto(request.url, { waitUntil: typeof waitFor === 'string' ? waitFor : 'load', timeout: left() });
  if (typeof waitFor !== 'string') await page.waitForSelector(waitFor.selector, { state: 'visible', timeout: left() });
  await runSteps(page, request.prepare?.steps ?? [], left);

  // In CSS pixels: each becomes deviceScaleFactor² pixels of the screenshot.
  const scale = request.viewport?.deviceScaleFactor ?? 1;
  const maxPixels = Math.floor(maxPixelsOf(request) / (scale * scale));
  const world = await openIsolatedWorld(page);
  let shot: { png: Buffer; clipped: boolean; stability?: { attempts: number; stable: boolean } };
  let title: string, htmlLength: number, html: string, aria: string, elements: readonly ElementBox[] | undefined;
  try {
    shot = request.stable
      ? await stableScreenshot(page, world, request, maxPixels, left)
      : await screenshot(page, world, request, maxPixels, left);
    if (shot.png.length > (request.maxScreenshotBytes ?? 25 * 1024 * 1024)) {
      throw new CaptureError('TOO_LARGE', `the screenshot is ${shot.png.length} bytes, over the limit`);
    }
    [title, [htmlLength, html], aria, elements] = await Promise.all([
      page.title(),
      serializedDom(world, maxChars(request)),
      // A document with no body (an SVG, an image) has no accessibility tree: the snapshot would wait for one.
      page
        .locator('body')
        .count()
        .then((bodies) => (bodies > 0 ? page.ariaSnapshot({ timeout: left() }) : '')),
      request.elements ? collectElements(page) : Promise.resolve(undefined),
    ]);
  } finally {
    await world.close();
  }
  const size = pngSize(shot.png);
  const max = maxChars(request);
  return {
    png: shot.png,
    width: size.width,
    height: size.height,
    title: title.slice(0, 1000),
    finalUrl: page.url(),
    status: response?.status() ?? null,
    dom: html,
    accessibility: aria.slice(0, max),
    ...(elements === undefined ? {} : { elements }),
    blockedRequests: [...lease.blocked],
    blockedCount: lease.blockedCount,
    bytesReceived: lease.budget.used,
    pageWeightExceeded: lease.budget.exceeded,
    truncated: { dom: htmlLength > max, accessibility: aria.length > max, screenshot: shot.clipped },
    capturedAt: new Date().toISOString(),
    ...(shot.stability ? { stability: shot.stability } : {}),
  };
}

const maxChars = (request: CaptureRequest): number => request.maxDomChars ?? 2_000_000;

/**
 * page.content(), cut in the page: a page can build a DOM of hundreds of megabytes for little network,
 * and only `max` characters of it should cross into this process. Runs in an isolated world, whose
 * String.prototype.slice and XMLSerializer the page cannot replace.
 */
async function serializedDom(world: IsolatedWorld, max: number): Promise<[number, string]> {
  const result: unknown = await world.evaluate(
    `(() => {
    const doctype = document.doctype ? new XMLSerializer().serializeToString(document.doctype) : '';
    const html = doctype + (document.documentElement ? document.documentElement.outerHTML : '');
    return [html.length, html.slice(0, ${max})];
  })()`,
    { maxString: max, maxTotal: max + 100 },
  );
  const [length, html] = Array.isArray(result) ? result : [];
  return [typeof length === 'number' ? length : 0, typeof html === 'string' ? html.slice(0, max) : ''];
}

/**
 * Cookies and localStorage of the page's own site, set before it loads. Cookies are bound to the
 * page's URL (its host, its scheme); storage is written only when a document of the page's origin
 * starts, so neither reaches any other site the page or a step goes to.
 */
async function beforeLoad(lease: GuardedContext, request: CaptureRequest): Promise<void> {
  const prepare = request.prepare;
  if (prepare?.cookies && prepare.cookies.length > 0) {
    await lease.context.addCookies(prepare.cookies.map((c) => ({ name: c.name, value: c.value, url: request.url })));
  }
  const items = prepare?.localStorage;
  if (items && Object.keys(items).length > 0) {
    const origin = new URL(request.url).origin;
    // A script of literals only (JSON), run as each document of any origin starts.
    await lease.context.addInitScript({
      content: `(() => { const origin = ${JSON.stringify(origin)}; const items = ${JSON.stringify(items)};
        if (location.origin !== origin) return;
        for (const key of Object.keys(items)) localStorage.setItem(key, items[key]); })();`,
    });
  }
}

/**
 * The steps, in order, each within the capture's deadline. A step that navigates (a submitted form)
 * is waited for like the first load; every request it makes goes through the context's guard.
 * A failing step names its number and action, never a value typed (it may be a password).
 */
async function runSteps(page: Page, steps: readonly CaptureStep[], captureLeft: () => number): Promise<void> {
  // A step waits for its element at most STEP_TIMEOUT_MS, so a wrong selector is named at once
  // instead of spending the whole capture's time.
  const left = () => Math.min(captureLeft(), STEP_TIMEOUT_MS);
  for (const [index, step] of steps.entries()) {
    const what = `step ${index + 1} (${step.action}${step.selector !== undefined ? ` ${step.selector.slice(0, 200)}` : ''})`;
    try {
      switch (step.action) {
        case 'click':
          await page.locator(step.selector).first().click({ timeout: left() });
          break;
        case 'fill':
          await page.locator(step.selector).first().fill(step.value, { timeout: left() });
          break;
        case 'press':
          await page.locator(step.selector).first().press(step.key, { timeout: left() });
          break;
        case 'waitFor':
          await page.waitForSelector(step.selector, { state: 'visible', timeout: left() });
          break;
        case 'scroll':
          if (step.selector !== undefined) await page.locator(step.selector).first().scrollIntoViewIfNeeded({ timeout: left() });
          else await page.evaluate(`window.scrollTo(0, ${Math.max(0, Math.floor(step.y ?? 0))})`);
          break;
      }
      await page.waitForLoadState('load', { timeout: left() });
    } catch (error) {
      if (isCaptureError(error)) throw error;
      captureLeft(); // the capture's own deadline, when that is what ran out, is a TIMEOUT
      const reason =
        error instanceof Error && /Timeout/i.test(error.message) ? 'its element did not answer in time' : 'it could not be done';
      throw new CaptureError('STEP_FAILED', `${what}: ${reason}`, { cause: error });
    }
  }
}

/**
 * A screenshot of a page that has settled: fonts and the network first, then until two consecutive
 * screenshots are byte-identical (the same pixels encode the same). A page that never settles (an
 * animation the capture cannot disable, a ticking clock) gives its last screenshot, marked unstable,
 * for the caller to report rather than fail on.
 */
async function stableScreenshot(
  page: Page,
  world: IsolatedWorld,
  request: CaptureRequest,
  maxPixels: number,
  left: () => number,
): Promise<{ png: Buffer; clipped: boolean; stability: { attempts: number; stable: boolean } }> {
  await page.waitForLoadState('networkidle', { timeout: Math.min(NETWORK_QUIET_MS, left()) }).catch(() => undefined);
  // In the page's own world (fonts are its document's), bounded by the capture's deadline.
  await withDeadline(page.evaluate('document.fonts ? document.fonts.ready.then(() => true) : true'), left()).catch(() => undefined);
  let last = await screenshot(page, world, request, maxPixels, left);
  for (let attempts = 2; attempts <= STABLE_ATTEMPTS; attempts++) {
    const next = await screenshot(page, world, request, maxPixels, left);
    if (next.png.equals(last.png)) return { ...next, stability: { attempts, stable: true } };
    last = next;
  }
  return { ...last, stability: { attempts: STABLE_ATTEMPTS, stable: false } };
}

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('deadline')), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

async function screenshot(
  page: Page,
  world: IsolatedWorld,
  request: CaptureRequest,
  maxPixels: number,
  left: () => number,
): Promise<{ png: Buffer; clipped: boolean }> {
  const options = {
    type: 'png',
    animations: 'disabled',
    caret: 'hide',
    ...(request.mask && request.mask.length > 0 ? { mask: request.mask.map((m) => page.locator(m)), maskColor: MASK_COLOR } : {}),
  } as const;
  if (request.selector !== undefined) {
    const element = page.locator(request.selector).first();
    if ((await page.locator(request.selector).count()) === 0)
      throw new CaptureError('SELECTOR_NOT_FOUND', `no element matches ${request.selector}`);
    const box = await element.boundingBox({ timeout: left() });
    if (box === null || box.width < 1 || box.height < 1) throw new CaptureError('SELECTOR_NOT_FOUND', `${request.selector} is not visible`);
    if (box.width * box.height > maxPixels)
      throw new CaptureError(
        'TOO_LARGE',
        `${request.selector} is ${Math.round(box.width)}×${Math.round(box.height)} pixels, over the limit`,
      );
    return { png: await element.screenshot({ ...options, timeout: left() }), clipped: false };
  }
  if (!request.fullPage) return { png: await page.screenshot({ ...options, timeout: left() }), clipped: false };
  // The page states its own size; a lie only spoils its own capture, and the clip bounds the memory.
  const size = await world.evaluate(
    'document.documentElement ? [document.documentElement.scrollWidth, document.documentElement.scrollHeight] : [1, 1]',
    { maxTotal: 100 },
  );
  const [width, height] = Array.isArray(size) ? (size as unknown[]) : [];
  const clipWidth = Math.max(1, Math.min(Number(width) || 1, MAX_SIDE));
  const clipHeight = Math.max(1, Math.min(Number(height) || 1, Math.floor(maxPixels / clipWidth)));
  const clipped = clipWidth < (Number(width) || 1) || clipHeight < (Number(height) || 1);
  const png = await page.screenshot({
    ...options,
    fullPage: true,
    clip: { x: 0, y: 0, width: clipWidth, height: clipHeight },
    timeout: left(),
  });
  return { png, clipped };
}

function classify(error: unknown, lease: GuardedContext, request: CaptureRequest): CaptureError | unknown {
  if (isCaptureError(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (lease.context.browser()?.isConnected() === false) {
    return new CaptureError('BROWSER_FAILED', 'the browser crashed or disconnected during the capture', { cause: error });
  }
  if (lease.budget.exceeded && /net::ERR_/.test(message)) {
    return new CaptureError('TOO_LARGE', `the page passed the ${request.maxBytes}-byte page weight limit before it loaded`, {
      cause: error,
    });
  }
  if (
    /net::ERR_(BLOCKED_BY_CLIENT|SOCKS_CONNECTION_FAILED|TUNNEL_CONNECTION_FAILED|PROXY_CONNECTION_FAILED)/.test(message) &&
    lease.blocked.length > 0
  ) {
    const first = lease.blocked[0];
    return new CaptureError('BLOCKED_URL', `the page or a redirect was refused: ${first?.url} (${first?.reason})`, { cause: error });
  }
  if (/crash/i.test(message))
    return new CaptureError('NAVIGATION_FAILED', 'the page crashed (it may have run out of memory)', { cause: error });
  if (error instanceof errors.TimeoutError) return new CaptureError('TIMEOUT', firstLine(message), { cause: error });
  if (/Unexpected token|is not a valid selector|Failed to parse selector/i.test(message)) {
    return new CaptureError('INVALID_REQUEST', `bad selector: ${firstLine(message)}`, { cause: error });
  }
  if (/^page\.goto:|net::ERR_/.test(message)) return new CaptureError('NAVIGATION_FAILED', firstLine(message), { cause: error });
  return error;
}

const firstLine = (message: string): string => message.split('\n')[0] ?? message;

/** Device pixels a screenshot may hold (CaptureRequest.maxScreenshotPixels). */
const maxPixelsOf = (request: CaptureRequest): number => request.maxScreenshotPixels ?? 1280 * 16384;

function validate(request: CaptureRequest): void {
  const problem = (what: string) => new CaptureError('INVALID_REQUEST', what);
  if (typeof request.url !== 'string' || request.url.length === 0 || request.url.length > 8192)
    throw problem('url must be a string of 1 to 8192 characters');
  if (!Number.isInteger(request.timeoutMs) || request.timeoutMs < 100 || request.timeoutMs > 300_000)
    throw problem('timeoutMs must be an integer from 100 to 300000');
  if (!Number.isInteger(request.maxBytes) || request.maxBytes < 1) throw problem('maxBytes must be a positive integer');
  const viewport = request.viewport;
  if (viewport !== undefined) {
    for (const side of [viewport.width, viewport.height]) {
      if (!Number.isInteger(side) || side < 16 || side > 4096) throw problem('viewport width and height must be integers from 16 to 4096');
    }
    const scale = viewport.deviceScaleFactor ?? 1;
    if (!(scale >= 1 && scale <= 3)) throw problem('deviceScaleFactor must be from 1 to 3');
    // The screenshot of the viewport alone is this large in memory: bounded like a full page.
    if (viewport.width * viewport.height * scale * scale > maxPixelsOf(request))
      throw problem('the viewport times its deviceScaleFactor squared is over the screenshot pixel limit');
    if (viewport.colorScheme !== undefined && viewport.colorScheme !== 'light' && viewport.colorScheme !== 'dark')
      throw problem('colorScheme must be light or dark');
  }
  if (
    request.selector !== undefined &&
    (typeof request.selector !== 'string' || request.selector.length === 0 || request.selector.length > 1000)
  ) {
    throw problem('selector must be a string of 1 to 1000 characters');
  }
  const waitFor: unknown = request.waitFor;
  if (waitFor === undefined || WAIT_STATES.includes(waitFor as string)) return;
  const selector = (waitFor as { selector?: unknown } | null)?.selector;
  if (typeof selector !== 'string' || selector.length === 0 || selector.length > 1000) {
    throw problem(`waitFor must be one of ${WAIT_STATES.join(', ')} or { selector }`);
  }
}
