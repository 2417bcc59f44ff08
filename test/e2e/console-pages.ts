import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

/** What the console's browser tests share: the axe scan and the two widths (pure helpers, no test). */

export const WIDTHS = {
  phone: { width: 390, height: 844 },
  desktop: { width: 1280, height: 800 },
} as const;

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: 'minor' | 'moderate' | 'serious' | 'critical' | null;
  help: string;
  nodes: number;
}

/**
 * axe-core from node_modules, evaluated through the DevTools protocol (which the page's CSP does
 * not govern, so the console's policy stays as strict under test as in use), run on the whole page.
 */
export async function axeScan(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE_SOURCE);
  // A string, evaluated in the page (this project's types have no DOM library).
  return (await page.evaluate(
    "axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length })))",
  )) as AxeViolation[];
}

export const IMPACTS = ['critical', 'serious', 'moderate', 'minor'] as const;

/** Violations counted by impact. */
export function byImpact(violations: readonly AxeViolation[]): Record<(typeof IMPACTS)[number], number> {
  const counts = { critical: 0, serious: 0, moderate: 0, minor: 0 };
  for (const v of violations) if (v.impact) counts[v.impact] += 1;
  return counts;
}
