/**
 * Integration cases: the project's own calls of the component, repeated as the project makes them.
 */

import type { Planner } from './planner.ts';
import { judge } from './subject.ts';
import type { Usage } from './usages.ts';

export function addUsages(planner: Planner, usages: readonly Usage[]): void {
  if (usages.length === 0) {
    planner.skip(`no file given uses ${planner.subject.component.name} with literal arguments, so there is no project call to repeat`);
    return;
  }
  for (const usage of usages) {
    const where = `${usage.path}:${usage.line} (${usage.text.slice(0, 80)})`;
    if ('problem' in usage) {
      planner.skip(`the call at ${where}: ${usage.problem}`);
      continue;
    }
    const trace = planner.trace(usage.args);
    if (trace.outcome.kind === 'throws' && trace.dependentLines.length === 0) {
      // The project's own call hits a guard: a test would only restate the failure.
      planner.skip(`the call at ${where} throws at line ${trace.outcome.line}`, trace.outcome.line);
      continue;
    }
    const judgement = judge(planner.subject, trace, usage.args, true);
    if (!judgement.ok) {
      planner.skip(`the call at ${where}: ${judgement.reason}`, judgement.line);
      continue;
    }
    planner.add('usage', usage.line, usage.args, judgement.expectation, ` (as ${usage.path}:${usage.line} calls it)`);
  }
}
