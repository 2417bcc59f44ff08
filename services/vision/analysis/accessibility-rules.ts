import { MAX_FINDINGS_PER_CHECK, type Outcome } from './outcome.ts';
import { SEVERITIES, type Finding, type PageReport } from './types.ts';

/**
 * accessibility: axe-core's violations, one finding per offending node (axe keeps at most 20 nodes a
 * rule in the report; `nodeCount` in the evidence says how many there were). Colour contrast is
 * axe's color-contrast rule (WCAG 1.4.3), forced on when the report was made.
 */
export function accessibilityChecks(report: PageReport): Outcome {
  const { axe } = report;
  if (axe.version === null) {
    return {
      findings: [],
      metrics: {},
      checksRun: [],
      skipped: [{ check: 'axe', reason: axe.error ?? 'axe-core did not run in the page' }],
    };
  }
  const findings: Finding[] = [];
  const metrics: Record<string, number> = { violations: axe.violations.length, nodes: 0, contrastIncomplete: axe.contrastIncomplete };
  for (const severity of SEVERITIES) metrics[`impact.${severity}`] = 0;
  for (const v of axe.violations) {
    metrics.nodes = (metrics.nodes ?? 0) + v.nodeCount;
    metrics[`impact.${v.impact}`] = (metrics[`impact.${v.impact}`] ?? 0) + v.nodeCount;
    for (const node of v.nodes.slice(0, MAX_FINDINGS_PER_CHECK)) {
      findings.push({
        type: `axe:${v.id}`,
        severity: v.impact,
        message: `${v.help}: ${node.target}`,
        selector: node.target,
        ...(node.box ? { box: node.box } : {}),
        evidence: [v.description, node.failureSummary.replace(/\s+/g, ' ').trim(), `${v.nodeCount} node(s) in all`, v.helpUrl, node.html]
          .filter((part) => part !== '')
          .join(' | '),
      });
    }
  }
  const checksRun = ['axe', ...(axe.contrastChecked ? ['axe:color-contrast'] : [])];
  const skipped = axe.contrastChecked
    ? []
    : [{ check: 'axe:color-contrast', reason: 'axe did not run its color-contrast rule on this page' }];
  return { findings, metrics, checksRun, skipped };
}
