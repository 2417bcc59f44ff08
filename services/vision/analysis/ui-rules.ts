import { describeBox } from './geometry.ts';
import { MAX_FINDINGS_PER_CHECK, type Outcome } from './outcome.ts';
import type { Finding, PageReport } from './types.ts';

/**
 * ui-elements: the page's interactive elements as a listing (one minor finding each, so a client
 * gets role, name, selector and box in the same shape as everything else), and the one defect this
 * analysis owns: a visible, enabled control without an accessible name.
 */
export function uiElementChecks(report: PageReport): Outcome {
  const findings: Finding[] = [];
  const metrics: Record<string, number> = { elements: report.interactive.length, visible: 0, unnamed: 0 };
  const unnamed: Finding[] = [];
  for (const e of report.interactive) {
    metrics[`role.${e.role}`] = (metrics[`role.${e.role}`] ?? 0) + 1;
    if (e.visible) metrics.visible = (metrics.visible ?? 0) + 1;
    const state = [e.visible ? 'visible' : 'not visible', ...(e.disabled ? ['disabled'] : [])].join(', ');
    findings.push({
      type: 'interactive-element',
      severity: 'minor',
      message: `${e.role} ${e.name ? `"${e.name}"` : '(no accessible name)'}`,
      selector: e.selector,
      box: e.box,
      evidence: `<${e.tag}>, role ${e.role} (${e.roleSource}), name from ${e.nameSource}, ${describeBox(e.box)}, ${state}`,
    });
    if (e.name === '' && e.visible && !e.disabled) {
      metrics.unnamed = (metrics.unnamed ?? 0) + 1;
      if (unnamed.length < MAX_FINDINGS_PER_CHECK) {
        unnamed.push({
          type: 'unnamed-control',
          severity: 'serious',
          message: `a ${e.role} has no accessible name: a screen reader announces it as just "${e.role}"`,
          selector: e.selector,
          box: e.box,
          evidence: `<${e.tag}> with no aria-labelledby, aria-label, label, alt, title or text content; ${describeBox(e.box)}`,
        });
      }
    }
  }
  if (report.truncated.interactive !== undefined) metrics.elementsOnPage = report.truncated.interactive;
  return { findings: [...unnamed, ...findings], metrics, checksRun: ['interactive-elements', 'accessible-names'], skipped: [] };
}
