import type { Dialog, Frame, Locator, Page, Request } from 'playwright-core';
import { runAxe } from '../../vision/analysis/axe.ts';
import { componentNames, namePattern, type ComponentNames } from './component-names.ts';
import type { ClickEffect, ComponentA11y, LocatedComponent, LocatorSpec, ObservedRequest } from './page-facts.ts';

/**
 * Finds a component in a live page and examines it: present, visible, enabled, role and accessible
 * name, what a click changes, and axe's findings on it. Runs as a capture's inspector
 * (services/vision/browser/capture.ts), so the page is in a guarded context and every step is bounded
 * by the capture's deadline (`left`).
 */

export interface ProbeOptions {
  component: string;
  /** Click it and watch what changes (only when a check or a generated test needs it: a click has effects). */
  click: boolean;
  a11y: boolean;
  /** Keep a PNG of the component (a visual test's baseline). */
  screenshot: boolean;
}

export interface ProbeResult {
  located: LocatedComponent | null;
  tried: string[];
  click: ClickEffect | null;
  a11y: ComponentA11y | null;
  componentPng: Buffer | null;
}

const TEST_ID_ATTRIBUTES = ['data-testid', 'data-test-id', 'data-test', 'data-cy', 'data-component'] as const;
/** Roles tried when the name does not say one: what a component someone validates usually is. */
const LIKELY_ROLES = ['button', 'link', 'dialog', 'textbox', 'checkbox', 'heading'] as const;
const DIALOGS = 'dialog[open], [role="dialog"], [role="alertdialog"], [aria-modal="true"]';
/** After a click, the page counts as settled once no request has started or ended for this long. */
const QUIET_MS = 300;
/** The longest a click's effects are watched. */
const SETTLE_CAP_MS = 3000;

type AriaRole = Parameters<Page['getByRole']>[0];

// In-page functions are strings: they run in the page's world (the page can tamper with what they
// see, so each answer is checked on this side), and this project compiles without the DOM library.
// An element function must reach Playwright as a function (a string is evaluated, never called with
// the element), hence Function objects built from source.
const ELEMENT_FACTS = new Function(
  'el',
  `return { tag: el.tagName.toLowerCase(), text: String(el.innerText ?? el.textContent ?? '').trim().slice(0, 500), href: el.getAttribute('href') };`,
) as (el: unknown) => unknown;
const INSIDE_COUNT = new Function(
  'el',
  'selectors',
  `return selectors.filter((s) => {
  try { const node = document.querySelector(s); return node !== null && (node === el || el.contains(node)); } catch { return false; }
}).length;`,
) as (el: unknown, selectors: string[]) => unknown;
const OPEN_DIALOGS = `(() => {
  const visible = (el) => { const r = el.getBoundingClientRect(); const st = getComputedStyle(el); return r.width > 0 && r.height > 0 && st.visibility !== 'hidden' && st.display !== 'none'; };
  const nameOf = (el) => {
    const label = el.getAttribute('aria-label');
    if (label) return label.trim();
    const by = el.getAttribute('aria-labelledby');
    if (by) { const text = by.split(/\\s+/).map((id) => (document.getElementById(id) || {}).textContent || '').join(' ').trim(); if (text) return text; }
    const heading = el.querySelector('h1, h2, h3, h4, h5, h6');
    return heading && heading.textContent ? heading.textContent.trim() : null;
  };
  return Array.from(document.querySelectorAll(${JSON.stringify(DIALOGS)})).filter(visible).map((el, i) => ({ name: nameOf(el), handle: el.tagName + '#' + (el.id || i) }));
})()`;

function elementFacts(raw: unknown): { tag: string; text: string; href: string | null } {
  const r = (typeof raw === 'object' && raw !== null ? raw : {}) as { tag?: unknown; text?: unknown; href?: unknown };
  return {
    tag: typeof r.tag === 'string' ? r.tag.slice(0, 50) : '',
    text: typeof r.text === 'string' ? r.text.slice(0, 500) : '',
    href: typeof r.href === 'string' ? r.href.slice(0, 2000) : null,
  };
}

export function locatorFor(page: Page, spec: LocatorSpec): Locator {
  switch (spec.kind) {
    case 'test-id':
      return spec.attribute === 'data-testid'
        ? page.getByTestId(spec.value)
        : page.locator(`[${spec.attribute}="${cssString(spec.value)}"]`);
    case 'role':
      return page.getByRole(spec.role as AriaRole, { name: spec.name, exact: true });
    case 'text':
      return page.getByText(spec.text, { exact: true });
    case 'css':
      return page.locator(spec.selector);
  }
}

const cssString = (s: string) => s.replace(/["\\]/g, '\\$&');

export async function probeComponent(page: Page, left: () => number, options: ProbeOptions): Promise<ProbeResult> {
  const names = componentNames(options.component);
  const tried: string[] = [];
  const found = await locate(page, names, tried, left);
  if (!found) return { located: null, tried, click: null, a11y: null, componentPng: null };
  const { locator, spec } = found;
  const located = await describe(locator, spec, left);
  const a11y = options.a11y ? await componentA11y(page, locator, left) : null;
  const componentPng =
    options.screenshot && located.visible
      ? await locator.first().screenshot({ animations: 'disabled', caret: 'hide', timeout: left() })
      : null;
  const click = options.click ? await clickAndWatch(page, locator.first(), located, left) : null;
  return { located, tried, click, a11y, componentPng };
}

async function locate(
  page: Page,
  names: ComponentNames,
  tried: string[],
  left: () => number,
): Promise<{ locator: Locator; spec: LocatorSpec } | null> {
  // 1. A test id naming the component: the most deliberate mark a page can carry.
  tried.push(`a test id (${TEST_ID_ATTRIBUTES.join(', ')}) equal to ${names.testIdKeys.join(' or ')} (ignoring case and separators)`);
  const ids: unknown = await page.evaluate(`(() => {
    const attributes = ${JSON.stringify(TEST_ID_ATTRIBUTES)};
    const keys = ${JSON.stringify(names.testIdKeys)};
    const norm = (s) => s.toLowerCase().replace(/[^\\p{L}\\p{N}]+/gu, '');
    for (const attribute of attributes) {
      for (const el of Array.from(document.querySelectorAll('[' + attribute + ']'))) {
        const value = el.getAttribute(attribute) || '';
        if (keys.includes(norm(value))) return { attribute, value };
      }
    }
    return null;
  })()`);
  if (isTestId(ids)) {
    const spec: LocatorSpec = { kind: 'test-id', attribute: ids.attribute, value: ids.value };
    return { locator: locatorFor(page, spec), spec };
  }
  // 2. Role and accessible name: what a user (and assistive technology) sees.
  const roles = names.role !== null ? [names.role] : [...LIKELY_ROLES];
  if (names.nameWords.length > 0) {
    for (const whole of [true, false]) {
      for (const role of roles) {
        tried.push(`role ${role} named ${whole ? '' : 'containing '}"${names.nameWords.join(' ')}"`);
        const candidate = page.getByRole(role as AriaRole, { name: namePattern(names.nameWords, whole) });
        if ((await candidate.count()) > 0) {
          const name = (await accessibleName(candidate.first(), left)) ?? names.nameWords.join(' ');
          const spec: LocatorSpec = { kind: 'role', role, name };
          const exact = locatorFor(page, spec);
          return { locator: (await exact.count()) > 0 ? exact : candidate, spec };
        }
      }
    }
    // 3. Visible text.
    tried.push(`text "${names.nameWords.join(' ')}"`);
    const text = page.getByText(namePattern(names.nameWords, true));
    if ((await text.count()) > 0) {
      const exactText = ((await text.first().textContent({ timeout: left() })) ?? '').trim();
      const spec: LocatorSpec = { kind: 'text', text: exactText };
      return { locator: exactText ? locatorFor(page, spec) : text, spec };
    }
  }
  // 4. An id or class in kebab-case.
  for (const kebab of names.kebab) {
    if (!/^[a-z0-9-]+$/.test(kebab)) continue;
    for (const selector of [`#${kebab}`, `.${kebab}`]) {
      tried.push(`css ${selector}`);
      if ((await page.locator(selector).count()) > 0) {
        const spec: LocatorSpec = { kind: 'css', selector };
        return { locator: page.locator(selector), spec };
      }
    }
  }
  return null;
}

const isTestId = (v: unknown): v is { attribute: string; value: string } =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as { attribute?: unknown }).attribute === 'string' &&
  typeof (v as { value?: unknown }).value === 'string';

/** Role and name from Playwright's aria snapshot of the element (`- button "Add to cart"`). */
async function ariaOf(locator: Locator, left: () => number): Promise<{ role: string | null; name: string | null }> {
  const snapshot = await locator.ariaSnapshot({ timeout: left() }).catch(() => '');
  const first = snapshot.split('\n')[0] ?? '';
  const match = /^-\s+([a-z]+)(?:\s+"((?:[^"\\]|\\.)*)")?/.exec(first.trim());
  if (!match) return { role: null, name: null };
  return { role: match[1] ?? null, name: match[2] !== undefined ? match[2].replace(/\\(.)/g, '$1') : null };
}

async function accessibleName(locator: Locator, left: () => number): Promise<string | null> {
  return (await ariaOf(locator, left)).name;
}

async function describe(locator: Locator, spec: LocatorSpec, left: () => number): Promise<LocatedComponent> {
  const count = await locator.count();
  const first = locator.first();
  const [visible, aria, facts, box] = await Promise.all([
    first.isVisible(),
    ariaOf(first, left),
    first.evaluate(ELEMENT_FACTS).then(elementFacts),
    first.boundingBox({ timeout: left() }).catch(() => null),
  ]);
  // isEnabled only speaks for form controls; anything else is enabled unless aria-disabled says not.
  const enabled =
    (await first.isEnabled({ timeout: left() }).catch(() => true)) &&
    (await first.getAttribute('aria-disabled', { timeout: left() })) !== 'true';
  return {
    locator: spec,
    count,
    tag: facts.tag,
    role: aria.role,
    accessibleName: aria.name,
    text: facts.text,
    visible,
    enabled,
    href: facts.href,
    box: box ? { x: Math.round(box.x), y: Math.round(box.y), width: Math.round(box.width), height: Math.round(box.height) } : null,
  };
}

async function componentA11y(page: Page, locator: Locator, left: () => number): Promise<ComponentA11y> {
  const report = await runAxe(page, Math.min(left(), 15_000));
  if (report.version === null) return { violations: [], error: report.error ?? 'axe-core could not run' };
  const violations: ComponentA11y['violations'] = [];
  for (const violation of report.violations) {
    const targets = violation.nodes.map((n) => n.target);
    // Which of axe's nodes are the component or inside it: asked of the page, where the selectors live.
    const inside = Number(await locator.first().evaluate(INSIDE_COUNT, targets)) || 0;
    if (inside > 0) violations.push({ id: violation.id, impact: violation.impact, help: violation.help, nodes: inside });
  }
  return { violations };
}

async function openDialogs(page: Page): Promise<Array<{ name: string | null; handle: string }>> {
  const raw: unknown = await page.evaluate(OPEN_DIALOGS);
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((d: unknown) => {
    if (typeof d !== 'object' || d === null) return [];
    const { name, handle } = d as { name?: unknown; handle?: unknown };
    return typeof handle === 'string' ? [{ name: typeof name === 'string' ? name.slice(0, 500) : null, handle }] : [];
  });
}

async function clickAndWatch(page: Page, target: Locator, located: LocatedComponent, left: () => number): Promise<ClickEffect> {
  const none = (reason: string): ClickEffect => ({
    clicked: false,
    reason,
    navigatedTo: null,
    dialogs: [],
    nativeDialogs: [],
    requests: [],
  });
  if (!located.visible) return none('the component is not visible');
  if (!located.enabled) return none('the component is disabled');
  const before = { url: page.url(), dialogs: new Set((await openDialogs(page)).map((d) => d.handle)) };
  const requests: Array<{ request: Request; observed: ObservedRequest }> = [];
  const nativeDialogs: ClickEffect['nativeDialogs'] = [];
  let inflight = 0;
  let lastActivity = Date.now();
  let navigated: string | null = null;
  const onRequest = (request: Request) => {
    inflight++;
    lastActivity = Date.now();
    const type = request.resourceType();
    if (type === 'document' || type === 'fetch' || type === 'xhr') {
      const url = new URL(request.url());
      requests.push({ request, observed: { method: request.method(), url: request.url(), path: url.pathname + url.search, status: null } });
    }
  };
  const onDone = () => {
    inflight = Math.max(0, inflight - 1);
    lastActivity = Date.now();
  };
  const onNavigated = (frame: Frame) => {
    if (frame === page.mainFrame()) navigated = frame.url();
  };
  const onDialog = (dialog: Dialog) => {
    nativeDialogs.push({ type: dialog.type(), message: dialog.message().slice(0, 500) });
    void dialog.dismiss().catch(() => undefined);
  };
  page.on('request', onRequest);
  page.on('requestfinished', onDone);
  page.on('requestfailed', onDone);
  page.on('framenavigated', onNavigated);
  page.on('dialog', onDialog);
  try {
    await target.click({ timeout: Math.min(left(), 5000) });
    const settleUntil = Date.now() + Math.min(SETTLE_CAP_MS, Math.max(0, left() - 1000));
    // Watching for effects is bounded (a page may poll forever); it ends as soon as the page is quiet.
    while (Date.now() < settleUntil && (inflight > 0 || Date.now() - lastActivity < QUIET_MS)) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    if (navigated !== null)
      await page.waitForLoadState('load', { timeout: Math.max(1, Math.min(left() - 500, 5000)) }).catch(() => undefined);
    const after = navigated !== null ? [] : await openDialogs(page);
    for (const entry of requests) {
      const response = await entry.request.response().catch(() => null);
      entry.observed.status = response?.status() ?? null;
    }
    const navigatedTo = navigated !== null && navigated !== before.url ? navigated : null;
    return {
      clicked: true,
      navigatedTo,
      dialogs: after.filter((d) => !before.dialogs.has(d.handle)).map((d) => ({ name: d.name })),
      nativeDialogs,
      requests: requests.map((r) => r.observed),
    };
  } finally {
    page.off('request', onRequest);
    page.off('requestfinished', onDone);
    page.off('requestfailed', onDone);
    page.off('framenavigated', onNavigated);
    page.off('dialog', onDialog);
  }
}
