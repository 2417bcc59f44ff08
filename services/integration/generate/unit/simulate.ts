/**
 * Walks a function's steps for given arguments, evaluating what the condition language covers:
 * which `if`s go which way, and how the call ends (a known value, a guard's error, code it does
 * not follow, a browser global). Only the generator's own evaluator runs; the module never does.
 */

import { bindArgs } from './arguments.ts';
import { Crash, evaluate, Unsolvable } from './evaluate.ts';
import type { Env } from './evaluate.ts';
import type { Expr } from './expr.ts';
import type { Flow, Step, ThrownError } from './flow.ts';
import type { Param } from './signature.ts';
import { isPlainObject } from './values.ts';
import type { Arg, Value } from './values.ts';

export type Outcome =
  | { kind: 'returns'; value: Value; line: number }
  /** runs into code the generator does not follow (an unevaluated return value, a loop that may return) */
  | { kind: 'unknown'; line: number; reason: string }
  | { kind: 'throws'; error?: ThrownError; line: number }
  /** a condition the evaluator cannot decide, on a path where it matters */
  | { kind: 'stuck'; line: number; reason: string }
  /** the code would throw on its own (reading a property of undefined) */
  | { kind: 'crash'; line: number; reason: string }
  | { kind: 'dom'; line: number };

export interface Visit {
  value: boolean;
  /** the names as they were when the condition was evaluated */
  env: Env;
}

export interface Trace {
  outcome: Outcome;
  /** `if` and ternary ids -> how their condition went */
  visits: Map<number, Visit>;
  /** code the generator does not evaluate that reads the arguments, run before the outcome */
  dependentLines: number[];
  /** how many `if` blocks enclose the step that ended the call (0: the function's own last steps) */
  exitDepth: number;
  /** calls in code the generator ran past without evaluating: the names they start from, with lines */
  calls: Array<{ root: string; line: number }>;
}

interface State {
  env: Env;
  constants: Env;
  calls: Trace['calls'];
  visits: Map<number, Visit>;
  dependentLines: number[];
  /** set once an undecidable `if` without a throw in it was passed: later values are not certain */
  uncertain?: string;
  exitDepth: number;
}

/** `constants` are the module's own constants (`const MAX = 10`): known, and not the arguments. */
export function simulate(flow: Flow, params: readonly Param[], args: readonly Arg[], line: number, constants: Env = new Map()): Trace {
  let env: Env;
  try {
    env = bindArgs(params, args, constants);
  } catch (error) {
    if (error instanceof Crash)
      return { outcome: { kind: 'crash', line, reason: error.message }, visits: new Map(), dependentLines: [], exitDepth: 0, calls: [] };
    throw error;
  }
  const state: State = { env, constants, calls: [], visits: new Map(), dependentLines: [], exitDepth: 0 };
  const outcome = run(flow.steps, state, 0) ?? ended(state, line);
  return { outcome, visits: state.visits, dependentLines: state.dependentLines, exitDepth: state.exitDepth, calls: state.calls };
}

function ended(state: State, line: number): Outcome {
  return state.uncertain ? { kind: 'unknown', line, reason: state.uncertain } : { kind: 'returns', value: undefined, line };
}

function run(steps: readonly Step[], state: State, depth: number): Outcome | undefined {
  for (const step of steps) {
    const outcome = runStep(step, state, depth);
    if (outcome) {
      if (state.exitDepth === 0 && outcome.kind !== 'stuck') state.exitDepth = depth;
      return outcome;
    }
  }
  return undefined;
}

function runStep(step: Step, state: State, depth: number): Outcome | undefined {
  const { env } = state;
  if (step.kind === 'if') {
    if (step.domLine !== undefined) return { kind: 'dom', line: step.domLine };
    let value: boolean;
    try {
      value = Boolean(evaluate(step.test, env));
    } catch (error) {
      if (error instanceof Crash) return { kind: 'crash', line: step.line, reason: error.message };
      if (!(error instanceof Unsolvable)) throw error;
      const reason = `cannot decide \`${step.text}\` at line ${step.line}: ${error.message}`;
      noteCalls(step.calls, step.line, state);
      // Either way is fine for a case that only needs the call not to throw, unless a branch throws.
      if (mayThrow(step.then) || (step.else && mayThrow(step.else))) return { kind: 'stuck', line: step.line, reason };
      for (const block of [step.then, step.else ?? []]) taintBlock(block, state);
      state.uncertain ??= reason;
      return undefined;
    }
    state.visits.set(step.id, { value, env: new Map(env) });
    const block = value ? step.then : step.else;
    return block ? run(block, state, depth + 1) : undefined;
  }
  const facts = step.kind === 'code' ? step : step.facts;
  for (const ternary of facts.ternaries) {
    try {
      state.visits.set(ternary.id, { value: Boolean(evaluate(ternary.test, env)), env: new Map(env) });
    } catch (error) {
      if (!(error instanceof Unsolvable || error instanceof Crash)) throw error;
    }
  }
  if (facts.domLine !== undefined) return { kind: 'dom', line: facts.domLine };
  switch (step.kind) {
    case 'throw': {
      if (state.uncertain) return { kind: 'stuck', line: step.line, reason: state.uncertain };
      if (!step.site) return { kind: 'throws', line: step.line };
      const error: ThrownError = { ctor: step.site.ctor };
      const message = step.site.message && messageOf(step.site.message, env);
      if (message !== undefined) error.message = message;
      return { kind: 'throws', error, line: step.line };
    }
    case 'return': {
      if (!step.value)
        return state.uncertain
          ? { kind: 'unknown', line: step.line, reason: state.uncertain }
          : { kind: 'returns', value: undefined, line: step.line };
      try {
        const value = evaluate(step.value, env);
        return state.uncertain
          ? { kind: 'unknown', line: step.line, reason: state.uncertain }
          : { kind: 'returns', value, line: step.line };
      } catch (error) {
        if (error instanceof Crash) return { kind: 'crash', line: step.line, reason: error.message };
        if (!(error instanceof Unsolvable)) throw error;
        noteCalls(step.facts.calls, step.line, state);
        return { kind: 'unknown', line: step.line, reason: error.message };
      }
    }
    case 'let': {
      if (step.name !== undefined && step.value) {
        try {
          env.set(step.name, { known: true, value: evaluate(step.value, env) });
          return undefined;
        } catch (error) {
          if (error instanceof Crash) return { kind: 'crash', line: step.line, reason: error.message };
          if (!(error instanceof Unsolvable)) throw error;
        }
      }
      noteDependent(step.facts, state);
      noteCalls(step.facts.calls, step.line, state);
      taint(step.facts, state);
      for (const name of step.names)
        env.set(name, { known: false, reason: `${name} is computed at line ${step.line} by code the generator does not evaluate` });
      return undefined;
    }
    case 'code':
      noteDependent(step, state);
      noteCalls(step.calls, step.line, state);
      taint(step, state);
      if (step.mayExit) state.uncertain ??= `line ${step.line} may return or throw`;
      return undefined;
  }
}

/** The error's message when the evaluator can compute it as a string (a literal, a template of known values). */
function messageOf(expr: Expr, env: Env): string | undefined {
  try {
    const value = evaluate(expr, env);
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

function noteCalls(calls: ReadonlySet<string>, line: number, state: State): void {
  for (const root of calls) state.calls.push({ root, line });
}

function noteDependent(facts: { mentions: Set<string>; line: number }, state: State): void {
  for (const name of facts.mentions) {
    if (state.env.has(name) && state.env.get(name) !== state.constants.get(name)) {
      state.dependentLines.push(facts.line);
      return;
    }
  }
}

/** Assigned names change; objects and arrays may change through any use. */
function taint(facts: { mentions: Set<string>; assigned: Set<string>; line: number }, state: State): void {
  for (const name of facts.mentions) {
    const binding = state.env.get(name);
    if (!binding) continue;
    const mutable = binding.known && (isPlainObject(binding.value) || Array.isArray(binding.value));
    if (facts.assigned.has(name) || mutable) state.env.set(name, { known: false, reason: `${name} may be changed at line ${facts.line}` });
  }
}

/** A block that may or may not run: what it could change is unknown, and its calls may happen. */
function taintBlock(steps: readonly Step[], state: State): void {
  for (const step of steps) {
    if (step.kind === 'if') {
      noteCalls(step.calls, step.line, state);
      taintBlock(step.then, state);
      if (step.else) taintBlock(step.else, state);
      continue;
    }
    const facts = step.kind === 'code' ? step : step.facts;
    taint(facts, state);
    noteCalls(facts.calls, step.line, state);
    if (step.kind === 'let')
      for (const name of step.names)
        state.env.set(name, { known: false, reason: `${name} is set at line ${step.line} on a path the generator cannot decide` });
  }
}

function mayThrow(steps: readonly Step[]): boolean {
  return steps.some(
    (s) =>
      s.kind === 'throw' ||
      (s.kind === 'code' && s.mayExit) ||
      (s.kind === 'if' && (mayThrow(s.then) || (s.else !== undefined && mayThrow(s.else)))),
  );
}
