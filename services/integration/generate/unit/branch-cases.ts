/**
 * Cases from the function's conditions: guard clauses that throw (comprehensive), both sides of
 * every numeric comparison in them (comprehensive: guards; exhaustive: every `if`), and each
 * branch and ternary side the evaluator can steer into (exhaustive).
 */

import { referenceOf, constantOf, defaultValueOf } from './candidates.ts';
import { evaluate } from './evaluate.ts';
import type { Expr } from './expr.ts';
import { printExpr } from './expr.ts';
import type { IfStep, LineRange, Step, Ternary } from './flow.ts';
import type { Found, Planner } from './planner.ts';
import type { Trace } from './simulate.ts';
import { argsOf, judge } from './subject.ts';
import { OMIT } from './values.ts';
import type { Arg } from './values.ts';

type IfNode = IfStep['step'];

/** A numeric comparison inside a condition, and whether it being true makes the condition true. */
interface Atom {
  expr: Extract<Expr, { kind: 'binary' }>;
  positive: boolean;
}

const COMPARISONS = new Set(['<', '<=', '>', '>=', '===', '!==', '==', '!=']);

/** left - right when the comparison is true by the smallest step, and when false by the smallest step. */
const DELTAS: Readonly<Record<string, { inside: number[]; outside: number[] }>> = {
  '<': { inside: [-1], outside: [0] },
  '<=': { inside: [0], outside: [1] },
  '>': { inside: [1], outside: [0] },
  '>=': { inside: [0], outside: [-1] },
  '===': { inside: [0], outside: [1, -1] },
  '==': { inside: [0], outside: [1, -1] },
  '!==': { inside: [1, -1], outside: [0] },
  '!=': { inside: [1, -1], outside: [0] },
};

export function addBranchCases(planner: Planner, coverage: 'comprehensive' | 'exhaustive'): void {
  const exhaustive = coverage === 'exhaustive';
  for (const { step } of planner.subject.flow.ifs) {
    const guard = throwIn(step.then) ?? (step.else ? throwIn(step.else) : undefined);
    for (const side of [true, false]) {
      const block = side ? step.then : step.else;
      if (!block) continue;
      const thrown = throwIn(block);
      if (thrown) addError(planner, step, side, thrown);
      if (thrown && exhaustive && side) addDisjuncts(planner, step, thrown);
    }
    if (exhaustive) {
      for (const side of [true, false]) {
        const block = side ? step.then : step.else;
        const lines = side ? step.thenLines : step.elseLines;
        // An `else if` is covered as the `if` it is.
        if (!block || !lines || throwIn(block) || (!side && block.length === 1 && block[0]?.kind === 'if')) continue;
        addBranch(planner, step, side, lines);
      }
    }
    if (guard || exhaustive) addBoundaries(planner, step);
  }
  if (!exhaustive) return;
  for (const ternary of planner.subject.flow.ternaries) for (const side of [true, false]) addTernary(planner, ternary, side);
}

function throwIn(block: readonly Step[]): Extract<Step, { kind: 'throw' }> | undefined {
  return block.find((s): s is Extract<Step, { kind: 'throw' }> => s.kind === 'throw');
}

function sideText(text: string, side: boolean): string {
  return side ? text : `!(${text})`;
}

function addError(planner: Planner, step: IfNode, side: boolean, thrown: Extract<Step, { kind: 'throw' }>): void {
  const what = `the guard at line ${step.line} (\`${sideText(step.text, side)}\`)`;
  const found = planner.find([
    (t) => t.visits.get(step.id)?.value === side && t.outcome.kind === 'throws' && t.outcome.line === thrown.line,
  ]);
  if (!found) {
    planner.unsolved(what, step.line, step.test);
    return;
  }
  const judgement = judge(planner.subject, found.trace, found.args);
  if (!judgement.ok) planner.skip(`${what}: ${judgement.reason}`, step.line);
  else planner.add('error', step.line, found.args, judgement.expectation);
}

/** `a || b` guards: one case per operand, with the others false, so each check is seen to work. */
function addDisjuncts(planner: Planner, step: IfNode, thrown: Extract<Step, { kind: 'throw' }>): void {
  const parts = disjuncts(step.test);
  if (parts.length < 2) return;
  parts.forEach((part, i) => {
    const others = parts.filter((_, j) => j !== i);
    const what = `the guard at line ${step.line} through \`${printExpr(part)}\` alone`;
    const found = planner.find([
      (t) => {
        const visit = t.visits.get(step.id);
        if (!visit?.value || t.outcome.kind !== 'throws' || t.outcome.line !== thrown.line) return false;
        return truthIn(part, visit.env) === true && others.every((o) => truthIn(o, visit.env) === false);
      },
    ]);
    if (!found) {
      planner.unsolved(what, step.line);
      return;
    }
    const judgement = judge(planner.subject, found.trace, found.args);
    if (!judgement.ok) planner.skip(`${what}: ${judgement.reason}`, step.line);
    else planner.add('error', step.line, found.args, judgement.expectation, ` (${printExpr(part)})`);
  });
}

function disjuncts(expr: Expr): Expr[] {
  if (expr.kind === 'binary' && expr.operator === '||') return [...disjuncts(expr.left), ...disjuncts(expr.right)];
  return [expr];
}

function truthIn(expr: Expr, env: Parameters<typeof evaluate>[1]): boolean | undefined {
  try {
    return Boolean(evaluate(expr, env));
  } catch {
    return undefined;
  }
}

function addBoundaries(planner: Planner, step: IfNode): void {
  for (const atom of atomsOf(step.test, planner)) {
    const text = printExpr(atom.expr);
    const deltas = DELTAS[atom.expr.operator];
    if (!deltas) continue;
    for (const atomTrue of [true, false]) {
      const wanted = atomTrue ? deltas.inside : deltas.outside;
      const testValue = atomTrue === atom.positive;
      const at = (t: Trace): boolean => {
        const visit = t.visits.get(step.id);
        if (!visit || visit.value !== testValue) return false;
        const delta = differenceIn(atom.expr, visit.env);
        return delta !== undefined && wanted.includes(delta);
      };
      const acceptable = (t: Trace, args: readonly Arg[]): boolean => judge(planner.subject, t, args).ok;
      const found = planner.find([
        // Where the condition lets the call through, a case that shows it does not throw.
        (t, args) => at(t) && acceptable(t, args) && (testValue === guardFires(step) || t.outcome.kind !== 'throws'),
        (t, args) => at(t) && acceptable(t, args),
      ]);
      const what = `the boundary of \`${text}\` at line ${step.line} (${atomTrue ? 'just true' : 'just false'})`;
      if (!found) {
        planner.unsolved(what, step.line);
        continue;
      }
      const explicit = withDefaultsWritten(planner, found, atom);
      const judgement = judge(planner.subject, explicit.trace, explicit.args);
      if (!judgement.ok) planner.skip(`${what}: ${judgement.reason}`, step.line);
      else planner.add('boundary', step.line, explicit.args, judgement.expectation, ` (boundary: ${text} is ${atomTrue})`);
    }
  }
}

/** Which value of the condition makes the `if` throw (true for `if (bad) throw`). */
function guardFires(step: IfNode): boolean | undefined {
  if (throwIn(step.then)) return true;
  if (step.else && throwIn(step.else)) return false;
  return undefined;
}

function atomsOf(test: Expr, planner: Planner): Atom[] {
  const leaves = planner.subject.leaves;
  const out: Atom[] = [];
  const walk = (e: Expr, positive: boolean): void => {
    if (e.kind === 'unary' && e.operator === '!') {
      walk(e.argument, !positive);
      return;
    }
    if (e.kind !== 'binary') return;
    if (e.operator === '&&' || e.operator === '||') {
      walk(e.left, positive);
      walk(e.right, positive);
      return;
    }
    if (!COMPARISONS.has(e.operator)) return;
    const numeric = (side: Expr): boolean => {
      const c = constantOf(side, planner.subject.constants);
      return c ? typeof c.value === 'number' && Number.isFinite(c.value) : referenceOf(side, leaves) !== undefined;
    };
    const refs = [e.left, e.right].filter((s) => referenceOf(s, leaves) !== undefined).length;
    if (refs > 0 && numeric(e.left) && numeric(e.right)) out.push({ expr: e, positive });
  };
  walk(test, true);
  return out;
}

function differenceIn(expr: Extract<Expr, { kind: 'binary' }>, env: Parameters<typeof evaluate>[1]): number | undefined {
  try {
    const left = evaluate(expr.left, env);
    const right = evaluate(expr.right, env);
    return typeof left === 'number' && typeof right === 'number' && Number.isFinite(left - right) ? left - right : undefined;
  } catch {
    return undefined;
  }
}

/** A boundary case reads better with the compared values written out, defaults included. */
function withDefaultsWritten(planner: Planner, found: Found, atom: Atom): Found {
  const { subject } = planner;
  const assignment = new Map(found.assignment);
  let changed = false;
  for (const side of [atom.expr.left, atom.expr.right]) {
    const ref = referenceOf(side, subject.leaves);
    if (!ref || (assignment.get(ref.leaf.id) ?? OMIT) !== OMIT) continue;
    const value = defaultValueOf(ref.leaf, subject.constants);
    if (value === undefined || value === OMIT) continue;
    assignment.set(ref.leaf.id, value);
    changed = true;
  }
  if (!changed) return found;
  const args = argsOf(subject, assignment);
  const trace = planner.trace(args);
  const before = judge(subject, found.trace, found.args);
  const after = judge(subject, trace, args);
  const same = before.ok && after.ok && JSON.stringify(before.expectation.assertion) === JSON.stringify(after.expectation.assertion);
  return same ? { assignment, args, trace } : found;
}

function addBranch(planner: Planner, step: IfNode, side: boolean, lines: LineRange): void {
  const within = (t: Trace): boolean => t.outcome.kind !== 'dom' && t.outcome.line >= lines[0] && t.outcome.line <= lines[1];
  const taken = (t: Trace): boolean => t.visits.get(step.id)?.value === side;
  const runs = (t: Trace): boolean => t.outcome.kind === 'returns' || t.outcome.kind === 'unknown';
  const ok = (t: Trace, args: readonly Arg[]): boolean => judge(planner.subject, t, args).ok;
  const found = planner.find([
    (t) => taken(t) && within(t) && t.outcome.kind === 'returns' && t.dependentLines.length === 0,
    (t, args) => taken(t) && runs(t) && ok(t, args),
    (t) => taken(t) && t.outcome.kind === 'dom',
    (t) => taken(t) && runs(t),
  ]);
  const what = `the branch at line ${step.line} where \`${sideText(step.text, side)}\``;
  if (!found) {
    planner.unsolved(what, step.line, step.test);
    return;
  }
  const judgement = judge(planner.subject, found.trace, found.args);
  if (!judgement.ok) planner.skip(`${what}: ${judgement.reason}`, judgement.line ?? step.line);
  else planner.add('branch', step.line, found.args, judgement.expectation, ` (${step.text} is ${side})`);
}

function addTernary(planner: Planner, ternary: Ternary, side: boolean): void {
  const taken = (t: Trace): boolean => t.visits.get(ternary.id)?.value === side;
  const runs = (t: Trace): boolean => t.outcome.kind === 'returns' || t.outcome.kind === 'unknown';
  const ok = (t: Trace, args: readonly Arg[]): boolean => judge(planner.subject, t, args).ok;
  const found = planner.find([
    (t, args) => taken(t) && runs(t) && t.dependentLines.length === 0 && ok(t, args),
    (t, args) => taken(t) && runs(t) && ok(t, args),
    (t) => taken(t) && t.outcome.kind === 'dom',
    (t) => taken(t) && runs(t),
  ]);
  const what = `the ${side ? 'first' : 'second'} branch of \`${ternary.text} ? … : …\` at line ${ternary.line}`;
  if (!found) {
    planner.unsolved(what, ternary.line, ternary.test);
    return;
  }
  const judgement = judge(planner.subject, found.trace, found.args);
  if (!judgement.ok) planner.skip(`${what}: ${judgement.reason}`, judgement.line ?? ternary.line);
  else planner.add('branch', ternary.line, found.args, judgement.expectation, ` (${ternary.text} is ${side})`);
}
