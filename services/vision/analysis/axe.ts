import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { openIsolatedWorld, type IsolatedWorld } from '../browser/isolated-world.ts';
import { CAPS } from './page-script.ts';
import { parseAxeReport } from './report-schema.ts';
import type { AxeReport } from './types.ts';

/**
 * axe-core in the captured page. Injected by the DevTools protocol into an isolated world of the
 * page (browser/isolated-world.ts), which the page's Content-Security-Policy does not govern (a
 * script tag would be refused by a strict CSP) and whose globals the page cannot replace: the page
 * cannot make axe's answer, or its size, whatever it likes. Its content still comes from the page,
 * so it is bounded in the world and validated here like every other fact from the page.
 */

let source: string | undefined;
const axeSource = (): string => (source ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8'));

// color-contrast is on by default; it is named so that a future default cannot drop it silently.
// target-size stays off: the layout analysis applies WCAG 2.5.8 itself, with its exceptions.
const RUN = `(async () => {
  const axe = window.axe;
  if (!axe || typeof axe.run !== 'function') return { version: null, error: 'axe-core did not load in the page', violations: [], contrastChecked: false, contrastIncomplete: 0 };
  const result = await axe.run(document, { resultTypes: ['violations'], rules: { 'color-contrast': { enabled: true } },
    iframes: false, elementRef: false, selectors: true, ancestry: false, xpath: false, performanceTimer: false });
  const ran = (list) => Array.isArray(list) && list.some((r) => r.id === 'color-contrast');
  const incomplete = (result.incomplete || []).find((r) => r.id === 'color-contrast');
  const flat = (target) => (Array.isArray(target) ? target : [target]).map((t) => (Array.isArray(t) ? t.join(' >>> ') : String(t))).join(' | ');
  const boxOf = (target) => {
    if (!Array.isArray(target) || target.length !== 1 || typeof target[0] !== 'string') return undefined;
    let el = null;
    try { el = document.querySelector(target[0]); } catch { return undefined; }
    if (!el) return undefined;
    const r = el.getBoundingClientRect();
    return { x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height };
  };
  return {
    version: String(axe.version),
    contrastChecked: ran(result.violations) || ran(result.passes) || ran(result.incomplete) || ran(result.inapplicable),
    contrastIncomplete: incomplete ? incomplete.nodes.length : 0,
    violations: result.violations.slice(0, ${CAPS.axeViolations}).map((v) => ({
      id: v.id, impact: v.impact, description: v.description, help: v.help, helpUrl: v.helpUrl, nodeCount: v.nodes.length,
      nodes: v.nodes.slice(0, ${CAPS.axeNodes}).map((n) => ({ target: flat(n.target), html: String(n.html || ''), failureSummary: String(n.failureSummary || ''), box: boxOf(n.target) })),
    })),
  };
})()`;

const failed = (error: string): AxeReport => ({
  version: null,
  error: error.slice(0, 300),
  violations: [],
  contrastChecked: false,
  contrastIncomplete: 0,
});

/**
 * axe's violations in the page, within `budgetMs`. A failure (the page broke axe, or it ran out of
 * time) is reported in `error`, not thrown: the rest of the report is still worth having.
 */
export async function runAxe(page: Page, budgetMs: number, world?: IsolatedWorld): Promise<AxeReport> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`axe did not finish within ${budgetMs} ms`)), budgetMs);
  });
  let own: Promise<IsolatedWorld> | undefined;
  try {
    const raw: unknown = await Promise.race([
      (async () => {
        const w = world ?? (await (own = openIsolatedWorld(page)));
        await w.inject(axeSource());
        return w.evaluate(RUN, { maxString: 500 });
      })(),
      timeout,
    ]);
    return parseAxeReport(raw);
  } catch (error) {
    return failed(error instanceof Error ? (error.message.split('\n')[0] ?? error.message) : String(error));
  } finally {
    clearTimeout(timer);
    void own?.then((w) => w.close()).catch(() => undefined);
  }
}
