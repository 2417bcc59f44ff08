import { z } from 'zod';
import type { ElementClue, PageReport } from './types.ts';

/**
 * What the page says of each element a finding can name (its text, test id, role, label, id and
 * classes), read in the isolated world right after the other facts, so that a finding can later be
 * traced to the source file that renders it (app/code-links.ts). Like every fact of the page, it is
 * the page's word: bounded in the world, validated here.
 */

/** Elements described: findings name at most this many distinct selectors worth tracing. */
export const MAX_CLUES = 200;
const MAX_CLASSES = 8;

/** Every selector of the report a finding can carry, most likely to be a finding first (axe, then the rest). */
export function clueSelectors(report: Omit<PageReport, 'clues'>): string[] {
  const all = [
    ...report.axe.violations.flatMap((v) => v.nodes.map((n) => n.target)),
    ...report.images.map((i) => i.selector),
    ...report.textIssues.map((t) => t.selector),
    ...report.offScreen.map((o) => o.selector),
    ...report.wideElements.map((w) => w.selector),
    ...report.interactive.map((i) => i.selector),
    ...report.siblingGroups.flatMap((g) => g.children.map((c) => c.selector)),
  ];
  return [...new Set(all.filter((s) => s !== ''))].slice(0, MAX_CLUES);
}

/** The script that describes the elements; it answers one entry per selector that matched. */
export function cluesScript(selectors: readonly string[]): string {
  return `(() => {
  const selectors = ${JSON.stringify(selectors)};
  const clean = (s) => String(s == null ? '' : s).replace(/\\s+/g, ' ').trim();
  const out = [];
  for (const selector of selectors) {
    let el = null;
    try { el = document.querySelector(selector); } catch { el = null; }
    if (!el) continue;
    const attr = (name) => clean(el.getAttribute(name)).slice(0, 200);
    const classes = String(el.getAttribute('class') || '').split(/\\s+/).filter((c) => c !== '').slice(0, ${MAX_CLASSES});
    out.push({ selector, tag: el.localName, text: clean(el.textContent).slice(0, 120),
      testId: attr('data-testid') || attr('data-test') || attr('data-cy'), id: clean(el.id).slice(0, 200),
      role: attr('role'), ariaLabel: attr('aria-label'), classes, alt: attr('alt'), src: attr('src'), name: attr('name') });
  }
  return out;
})()`;
}

const str = (max: number) => z.string().transform((s) => s.slice(0, max));

export const elementClue = z.object({
  selector: str(300),
  tag: str(40),
  text: str(120),
  testId: str(200),
  id: str(200),
  role: str(40),
  ariaLabel: str(200),
  classes: z.array(str(100)).transform((c) => c.slice(0, MAX_CLASSES)),
  alt: str(200),
  src: str(300),
  name: str(200),
});

/** The clues the page answered: a malformed entry is dropped, never the report. */
export function parseClues(raw: unknown): ElementClue[] {
  if (!Array.isArray(raw)) return [];
  const out: ElementClue[] = [];
  for (const value of raw.slice(0, MAX_CLUES)) {
    const parsed = elementClue.safeParse(value);
    if (parsed.success) out.push(parsed.data);
  }
  return out;
}
