/**
 * The basic level: the happy path. The author's `@example` lines when there are any (checked
 * against what the evaluator can tell, so a stale example is reported rather than emitted);
 * otherwise ordinary arguments that get past every guard.
 */

import type { Example } from './examples.ts';
import type { Planner } from './planner.ts';
import type { Trace } from './simulate.ts';
import { DOM_REASON, judge } from './subject.ts';
import { renderValue, sameValue } from './values.ts';
import type { Arg } from './values.ts';

export function addExamples(planner: Planner, examples: readonly Example[]): void {
  const { subject } = planner;
  for (const example of examples) {
    const where = `the @example at line ${example.line} (${example.text})`;
    if ('problem' in example) {
      planner.skip(`${where}: ${example.problem}`, example.line);
      continue;
    }
    if (subject.component.kind === 'class') {
      planner.skip(`${where}: a constructor's result is an instance, not a value to compare`, example.line);
      continue;
    }
    const { outcome, dependentLines } = planner.trace(example.args);
    const certain = dependentLines.length === 0;
    if (outcome.kind === 'dom') {
      planner.skip(`${where}: ${DOM_REASON}`, outcome.line);
      continue;
    }
    if (outcome.kind === 'crash') {
      planner.skip(`${where}: the call would fail at line ${outcome.line} (${outcome.reason})`, example.line);
      continue;
    }
    if (outcome.kind === 'throws' && certain) {
      planner.skip(`${where}: the guard at line ${outcome.line} throws for these arguments, so the example is out of date`, example.line);
      continue;
    }
    if (outcome.kind === 'returns' && certain && !sameValue(outcome.value, example.expected)) {
      planner.skip(
        `${where}: the code returns ${renderValue(outcome.value)} (line ${outcome.line}), so the example is out of date`,
        example.line,
      );
      continue;
    }
    const expected = renderValue(example.expected);
    const verb = subject.awaited ? 'resolves to' : 'returns';
    planner.add(
      'example',
      example.line,
      example.args,
      { assertion: { kind: 'equals', expected }, text: `${verb} ${expected}`, imports: [] },
      ' (@example)',
    );
  }
}

export function addHappyPath(planner: Planner): void {
  const { subject } = planner;
  const topLevel = (t: Trace): boolean => t.exitDepth === 0;
  const runs = (t: Trace): boolean => t.outcome.kind === 'returns' || t.outcome.kind === 'unknown';
  const ok = (t: Trace, args: readonly Arg[]): boolean => judge(subject, t, args).ok;
  const found = planner.find([
    (t) => topLevel(t) && t.outcome.kind === 'returns' && t.dependentLines.length === 0,
    (t, args) => topLevel(t) && runs(t) && ok(t, args),
    (t) => topLevel(t) && t.outcome.kind === 'dom',
    // Every way out is inside an `if`: any call that returns is the happy path.
    (t, args) => runs(t) && ok(t, args),
    // None holds up: found anyway, for the reason it is skipped.
    (t) => topLevel(t) && runs(t),
  ]);
  if (!found) {
    planner.unsolved('the happy path (a call that gets past every guard)', undefined);
    return;
  }
  const judgement = judge(subject, found.trace, found.args);
  if (!judgement.ok) {
    planner.skip(`the happy path: ${judgement.reason}`, judgement.line);
    return;
  }
  const outcome = found.trace.outcome;
  const line = outcome.kind === 'returns' || outcome.kind === 'unknown' ? outcome.line : subject.component.line;
  planner.add('happy', line, found.args, judgement.expectation);
}
