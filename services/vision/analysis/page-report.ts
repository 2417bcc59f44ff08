import type { Page } from 'playwright-core';
import { openIsolatedWorld, type IsolatedWorld } from '../browser/isolated-world.ts';
import { runAxe } from './axe.ts';
import { clueSelectors, cluesScript, parseClues } from './element-clues.ts';
import { CAPS, pageScript } from './page-script.ts';
import { parsePageFacts } from './report-schema.ts';
import type { ElementClue, ElementProbe, PageReport } from './types.ts';

export type { ElementProbe, PageReport } from './types.ts';
export { parsePageReport } from './report-schema.ts';

/**
 * The `PageInspector` of the analyses: everything they need from the live page, gathered right
 * after the screenshot (so the facts describe the picture) in two scripts: one DOM pass and axe,
 * both in an isolated world of the page (browser/isolated-world.ts), so that the page cannot
 * choose their answers nor make them as large as it likes.
 *
 *   const shot = await capture(pool, request, (page, left) => inspectPage(page, left, { probes }));
 *   analyze('layout', { report: shot.inspection, png: shot.png });
 */

export interface InspectOptions {
  /** Element checks of a test suite, answered in the report's `probes`. */
  probes?: readonly ElementProbe[];
}

// Left for the capture to close its context after axe gives up.
const MARGIN_MS = 500;

export async function inspectPage(page: Page, left: () => number, options: InspectOptions = {}): Promise<PageReport> {
  const probes = (options.probes ?? []).slice(0, CAPS.probes).map((p) => String(p.selector).slice(0, 1000));
  const world = await within(openIsolatedWorld(page), left(), 'opening the inspection world');
  try {
    const raw: unknown = await within(world.evaluate(pageScript(probes)), left(), 'the page inspection');
    const facts = parsePageFacts(raw);
    const axe = await runAxe(page, Math.max(1, left() - MARGIN_MS), world);
    const report: PageReport = { version: 1, ...facts, axe };
    return { ...report, clues: await describeElements(world, report, left) };
  } finally {
    await world.close();
  }
}

/** The clues of the elements findings can name; none (not a failed capture) when the page will not say. */
async function describeElements(world: IsolatedWorld, report: PageReport, left: () => number): Promise<ElementClue[]> {
  const selectors = clueSelectors(report);
  if (selectors.length === 0 || left() <= MARGIN_MS) return [];
  try {
    const raw = await within(
      world.evaluate(cluesScript(selectors), { maxString: 300, maxTotal: 400_000 }),
      left() - MARGIN_MS,
      'the element clues',
    );
    return parseClues(raw);
  } catch {
    report.errors.push('element clues: the page did not answer');
    return [];
  }
}

async function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
