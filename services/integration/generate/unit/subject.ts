/**
 * The component under test as the planner uses it: its parameters and steps, the search space for
 * its arguments, and how a set of arguments is simulated, written as a call, and turned into the
 * assertion the simulation justifies.
 */

import { isIdentifier } from '../code-literals.ts';
import { buildArgs, leafValues, renderArgs } from './arguments.ts';
import type { Assignment } from './arguments.ts';
import { candidatesOf } from './candidates.ts';
import type { Component, ModuleFacts } from './component.ts';
import { isGlobalError } from './dialects.ts';
import type { Assertion, ErrorSpec } from './dialects.ts';
import { namesIn, oneLine } from './expr.ts';
import type { Expr } from './expr.ts';
import type { Env } from './evaluate.ts';
import { flowOf } from './flow.ts';
import type { Flow, Step, ThrownError } from './flow.ts';
import { leavesOf, signatureOf } from './signature.ts';
import type { LeafParam, Signature } from './signature.ts';
import { simulate } from './simulate.ts';
import type { Outcome, Trace } from './simulate.ts';
import type { SearchSpace } from './solver.ts';
import { describeType, genuine, typeCheckOf } from './type-desc.ts';
import type { TypeCheck, TypeDesc } from './type-desc.ts';
import { OMIT, renderValue } from './values.ts';
import type { Arg } from './values.ts';

export interface Subject {
  component: Component;
  /** the name the test calls it by: its own, unless that clashes with the test's own names */
  localName: string;
  signature: Signature;
  flow: Flow;
  leaves: LeafParam[];
  space: SearchSpace;
  typescript: boolean;
  /** async functions reject instead of throwing, and their results are awaited */
  awaited: boolean;
  /** each leaf's declared or inferred type */
  types: ReadonlyMap<string, TypeDesc>;
  /** what the result is checked against when its value is not known */
  resultCheck?: TypeCheck;
  /** classes the module exports by name: error and result classes a test can import */
  importable: ReadonlySet<string>;
  constants: Env;
  /** names the module imports, with where from */
  imports: ReadonlyMap<string, string>;
}

export interface Expectation {
  assertion: Assertion;
  /** for the title: "returns 3", "throws RangeError 'quantity must not be negative'" */
  text: string;
  /** names the test must import from the module besides the component */
  imports: string[];
}

export type Judgement = { ok: true; expectation: Expectation } | { ok: false; reason: string; line?: number };

export const DOM_REASON = "needs a browser DOM: generate an e2e test with the page's url";

/** Names a generated test declares or imports itself. */
const TEST_NAMES = new Set([
  'expect',
  'describe',
  'it',
  'assert',
  'test',
  'vi',
  'jest',
  'before',
  'after',
  'beforeEach',
  'afterEach',
  'error',
  'caught',
]);

export function subjectOf(component: Component, facts: ModuleFacts, typescript: boolean): Subject {
  const localName = TEST_NAMES.has(component.name) ? `${component.name}UnderTest` : component.name;
  const signature = component.fn ? signatureOf(component.fn, component.doc) : { params: [], isAsync: false, isGenerator: false };
  const body = component.fn?.childForFieldName('body');
  const flow: Flow = body ? flowOf(body, facts.declared) : { steps: [], ifs: [], ternaries: [], uncovered: [] };
  if (component.kind === 'class' && component.extendsClass && !component.fn) {
    // The base class's constructor runs unseen: a step that reads nothing, so only lenient cases hold.
    flow.steps.unshift({
      kind: 'code',
      text: 'super(...)',
      mayExit: true,
      line: component.line,
      assigned: new Set(),
      mentions: new Set(),
      ternaries: [],
      calls: new Set(),
    });
  }
  const leaves = leavesOf(signature.params);
  // What the body computes from its parameters: conditions first, then returned and declared values.
  const defaults = leaves.flatMap((l) => (l.defaultExpr ? [l.defaultExpr] : []));
  const conditions: Expr[] = [
    ...flow.ifs.map((i) => i.step.test),
    ...flow.ternaries.map((t) => t.test),
    ...valuesIn(flow.steps),
    ...defaults,
  ];
  const read = new Set<string>();
  for (const condition of conditions) for (const name of namesIn(condition)) read.add(name);
  const vary = leaves.filter((l) => l.access && read.has(l.access.root)).map((l) => l.id);
  // A test imports and names these bare; an export name that is not an identifier (a string export
  // name, or one the parser took with invisible characters in it) is only ever described, by name.
  const importable = component.exportKind === 'module' ? new Set<string>() : new Set([...facts.exportedClasses].filter(isIdentifier));
  const candidates = candidatesOf(leaves, conditions, facts.constants);
  const subject: Subject = {
    component,
    localName,
    signature,
    flow,
    leaves,
    space: { leaves, pools: candidates.pools, vary },
    types: candidates.types,
    typescript,
    awaited: signature.isAsync,
    importable,
    constants: facts.constants,
    imports: facts.imports,
  };
  const check = component.kind === 'class' ? { kind: 'instance' as const, ctor: localName } : typeCheckOf(signature.returns, importable);
  if (check) subject.resultCheck = check;
  return subject;
}

function valuesIn(steps: readonly Step[]): Expr[] {
  const out: Expr[] = [];
  for (const step of steps) {
    if (step.kind === 'if') out.push(...valuesIn(step.then), ...valuesIn(step.else ?? []));
    else if ((step.kind === 'return' || step.kind === 'let') && step.value) out.push(step.value);
  }
  return out;
}

export function argsOf(subject: Subject, assignment: Assignment): Arg[] {
  return buildArgs(subject.signature.params, assignment);
}

export function traceOf(subject: Subject, args: readonly Arg[]): Trace {
  return simulate(subject.flow, subject.signature.params, args, subject.component.line, subject.constants);
}

export function callText(subject: Subject, args: readonly Arg[]): string {
  const rendered = renderArgs(subject.signature.params, args, subject.typescript);
  return `${subject.component.kind === 'class' ? 'new ' : ''}${subject.localName}(${rendered})`;
}

/**
 * The assertion a simulated call justifies. `strict` cases (errors, returned values) need every
 * step before the outcome to be evaluated or independent of the arguments; a case that only says
 * the call runs accepts code the generator does not follow.
 */
export function judge(subject: Subject, trace: Trace, args: readonly Arg[], trusted = false): Judgement {
  const { outcome } = trace;
  const independent = trace.dependentLines.length === 0;
  // Only asserting that a call runs leans on code the generator does not follow: made-up
  // arguments (not the project's own) must then be real values of their types.
  const lenient = outcome.kind === 'unknown' || (outcome.kind === 'returns' && !(independent && subject.component.kind === 'function'));
  const guess = lenient ? (outsideCall(subject, trace, trusted) ?? (trusted ? undefined : guessedArgument(subject, args))) : undefined;
  if (guess) return { ok: false, reason: guess.reason, line: guess.line ?? outcome.line };
  switch (outcome.kind) {
    case 'dom':
      return { ok: false, reason: DOM_REASON, line: outcome.line };
    case 'stuck':
      return { ok: false, reason: outcome.reason, line: outcome.line };
    case 'crash':
      return { ok: false, reason: `the call would fail at line ${outcome.line} on its own (${outcome.reason})`, line: outcome.line };
    case 'throws': {
      if (!independent) return { ok: false, reason: dependentReason(trace, outcome), line: outcome.line };
      return { ok: true, expectation: throwsExpectation(subject, outcome.error) };
    }
    case 'returns':
      if (independent && subject.component.kind === 'function') {
        const expected = renderValue(outcome.value);
        return {
          ok: true,
          expectation: {
            assertion: { kind: 'equals', expected },
            text: `${subject.awaited ? 'resolves to' : 'returns'} ${oneLine(expected, 40)}`,
            imports: [],
          },
        };
      }
      return { ok: true, expectation: runsExpectation(subject) };
    case 'unknown':
      return { ok: true, expectation: runsExpectation(subject) };
  }
}

/** Built-in classes whose constructors take anything a subclass passes on. */
const BUILT_IN_BASES = new Set(['Error', 'TypeError', 'RangeError', 'Object', 'Array', 'Map', 'Set', 'EventTarget']);

/** Globals whose calls reach outside the process (network, exit, timers that keep it alive). */
const ENVIRONMENT = new Set(['fetch', 'process', 'require', 'setTimeout', 'setInterval', 'XMLHttpRequest', 'WebSocket']);

/**
 * A call on the way that reaches code the generator has not read: another module (for the project's
 * own calls, only packages and Node's built-in modules count: calling project code is what an
 * integration test is for) or the environment.
 */
function outsideCall(subject: Subject, trace: Trace, trusted: boolean): { reason: string; line: number } | undefined {
  for (const { root, line } of trace.calls) {
    if (ENVIRONMENT.has(root) && !subject.signature.params.some((p) => p.label === root)) {
      return {
        reason: `line ${line} calls ${root}, which reaches outside the test, so a call that only has to run would depend on the environment`,
        line,
      };
    }
    const from = subject.imports.get(root);
    if (from === undefined || (trusted && from.startsWith('.'))) continue;
    return {
      reason: `line ${line} calls ${root} (imported from ${from}), code the generator does not read, so a call that only has to run would rest on a guess`,
      line,
    };
  }
  return undefined;
}

/** Why an argument is only a stand-in: its type is a service object, a function, an unknown name. */
function guessedArgument(subject: Subject, args: readonly Arg[]): { reason: string; line?: number } | undefined {
  const { component } = subject;
  if (component.extendsClass && !BUILT_IN_BASES.has(component.baseClass ?? '')) {
    return {
      reason: `${component.name} extends ${component.baseClass ?? 'another class'}, whose constructor the generator does not read, so a construction that only has to succeed would rest on a guess`,
    };
  }
  const values = leafValues(subject.signature.params, args);
  for (const leaf of subject.leaves) {
    const value = values.get(leaf.id) ?? OMIT;
    if (value === OMIT && leaf.optional) continue;
    const type = subject.types.get(leaf.id) ?? leaf.type;
    if (genuine(value, type)) continue;
    const what = !leaf.declared && type.kind === 'any' ? 'has no declared type' : `is ${describeType(type)}`;
    return {
      reason: `${leaf.label} ${what}, which the generator cannot make a real value of, so a call that only has to run would rest on a guess`,
    };
  }
  const unbuilt = subject.signature.params.find((p) => p.kind === 'opaque' && p.arrayPattern && !p.optional);
  return unbuilt ? { reason: `${unbuilt.label} is destructured as an array the generator does not build` } : undefined;
}

function dependentReason(trace: Trace, outcome: Outcome): string {
  const lines = [...new Set(trace.dependentLines)].join(', ');
  return `line ${lines} runs code the generator does not evaluate with the arguments before line ${outcome.line}, so the outcome there is not certain`;
}

export function runsExpectation(subject: Subject): Expectation {
  const check = subject.resultCheck;
  const imports = check?.kind === 'instance' && check.ctor !== subject.localName ? [check.ctor] : [];
  const verb = subject.awaited ? 'resolves to' : 'returns';
  if (!check) return { assertion: { kind: 'runs' }, text: subject.awaited ? 'resolves' : 'runs without throwing', imports };
  if (check.kind === 'array') return { assertion: { kind: 'runs', check }, text: `${verb} an array`, imports };
  if (check.kind === 'instance')
    return {
      assertion: { kind: 'runs', check },
      text: subject.component.kind === 'class' ? `makes a ${subject.component.name}` : `${verb} a ${check.ctor}`,
      imports,
    };
  const kinds = check.names.map((n) => (n === 'undefined' ? 'undefined' : `${/^[aeiou]/.test(n) ? 'an' : 'a'} ${n}`));
  return { assertion: { kind: 'runs', check }, text: `${verb} ${kinds.join(' or ')}`, imports };
}

export function throwsExpectation(subject: Subject, error: ThrownError | undefined): Expectation {
  const spec: ErrorSpec = {};
  const imports: string[] = [];
  if (error?.ctor) {
    if (isGlobalError(error.ctor)) spec.ctor = error.ctor;
    else if (subject.importable.has(error.ctor)) {
      spec.ctor = error.ctor;
      imports.push(error.ctor);
    } else spec.ctorName = error.ctor;
  }
  if (error?.message !== undefined) spec.message = error.message;
  const verb = subject.awaited ? 'rejects with' : 'throws';
  const what = [error?.ctor ?? 'an error', error?.message !== undefined ? `'${oneLine(error.message, 50)}'` : undefined]
    .filter(Boolean)
    .join(' ');
  return { assertion: { kind: 'throws', error: spec }, text: `${verb} ${what}`, imports };
}
