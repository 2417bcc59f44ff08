/**
 * The values worth trying for each leaf parameter, read off the conditions that mention it: both
 * sides of every number it is compared with, strings of the lengths it is checked against, a value
 * of each type a `typeof` asks about, NaN for `Number.isNaN`, falsy values for `!p`. The first value
 * is the leaf's ordinary value (its default, else a typical value of its type).
 */

import { evaluate } from './evaluate.ts';
import type { Env } from './evaluate.ts';
import type { Expr } from './expr.ts';
import type { LeafParam } from './signature.ts';
import type { TypeDesc } from './type-desc.ts';
import { OMIT, valueKey } from './values.ts';
import type { Arg, Value } from './values.ts';

export interface Reference {
  leaf: LeafParam;
  /** the condition reads `.length` of it */
  length: boolean;
}

type Fact =
  | { kind: 'compare'; constant: Value; length: boolean }
  | { kind: 'relative'; other: LeafParam }
  | { kind: 'typeof'; name: string }
  | { kind: 'predicate'; name: string }
  | { kind: 'truthy' }
  | { kind: 'has'; key: string }
  /** used in arithmetic: a number (or a bigint, next to a bigint constant) */
  | { kind: 'arithmetic'; bigint: boolean };

const ARITHMETIC = new Set(['-', '*', '/', '%', '**', '+']);

const COMPARISONS = new Set(['<', '<=', '>', '>=', '===', '!==', '==', '!=']);
const PREDICATES = new Set([
  'Number.isNaN',
  'Number.isInteger',
  'Number.isFinite',
  'Number.isSafeInteger',
  'isNaN',
  'isFinite',
  'Array.isArray',
]);
const MAX_POOL = 24;
const MAX_LENGTH = 1000;

/** Which leaf an expression reads: `q`, `props.max`, `name.length`. */
export function referenceOf(expr: Expr, leaves: readonly LeafParam[]): Reference | undefined {
  if (expr.kind === 'member' && expr.property === 'length') {
    const inner = chainOf(expr.object);
    const leaf = inner && find(leaves, inner);
    if (leaf) return { leaf, length: true };
  }
  const chain = chainOf(expr);
  const leaf = chain && find(leaves, chain);
  return leaf ? { leaf, length: false } : undefined;
}

function chainOf(expr: Expr): string[] | undefined {
  if (expr.kind === 'name') return [expr.name];
  if (expr.kind === 'member') {
    const object = chainOf(expr.object);
    return object ? [...object, expr.property] : undefined;
  }
  return undefined;
}

function find(leaves: readonly LeafParam[], chain: string[]): LeafParam | undefined {
  return leaves.find(
    (l) =>
      l.access &&
      l.access.root === chain[0] &&
      l.access.path.length === chain.length - 1 &&
      l.access.path.every((p, i) => p === chain[i + 1]),
  );
}

/** A value that needs no parameters: `0`, `-1`, `'USD'`, `null`, a module constant. */
export function constantOf(expr: Expr, constants: Env = new Map()): { value: Value } | undefined {
  try {
    return { value: evaluate(expr, constants) };
  } catch {
    return undefined;
  }
}

function dottedName(expr: Expr): string | undefined {
  if (expr.kind === 'name') return expr.name;
  if (expr.kind === 'member') {
    const object = dottedName(expr.object);
    return object && `${object}.${expr.property}`;
  }
  return undefined;
}

/** Facts per leaf id, in the order the conditions state them. */
export function factsOf(conditions: readonly Expr[], leaves: readonly LeafParam[], constants: Env = new Map()): Map<string, Fact[]> {
  const facts = new Map<string, Fact[]>();
  const add = (leaf: LeafParam, fact: Fact): void => {
    const list = facts.get(leaf.id) ?? [];
    list.push(fact);
    facts.set(leaf.id, list);
  };
  const visit = (expr: Expr, boolean: boolean): void => {
    if (boolean) {
      const ref = referenceOf(expr, leaves);
      if (ref && !ref.length) add(ref.leaf, { kind: 'truthy' });
    }
    switch (expr.kind) {
      case 'binary': {
        if (COMPARISONS.has(expr.operator)) {
          comparison(expr.left, expr.right, add, leaves, constants);
          comparison(expr.right, expr.left, add, leaves, constants);
        }
        if (ARITHMETIC.has(expr.operator)) {
          for (const [side, other] of [
            [expr.left, expr.right],
            [expr.right, expr.left],
          ] as const) {
            const ref = referenceOf(side, leaves);
            const constant = constantOf(other, constants);
            // `x + 1` is arithmetic, `x + ''` is concatenation.
            if (!ref || ref.length || (expr.operator === '+' && typeof constant?.value !== 'number' && typeof constant?.value !== 'bigint'))
              continue;
            add(ref.leaf, { kind: 'arithmetic', bigint: typeof constant?.value === 'bigint' });
          }
        }
        if (expr.operator === 'in') {
          const ref = referenceOf(expr.right, leaves);
          if (ref && !ref.length) add(ref.leaf, { kind: 'typeof', name: 'object' });
          const key = constantOf(expr.left, constants);
          if (ref && !ref.length && key && (typeof key.value === 'string' || typeof key.value === 'number'))
            add(ref.leaf, { kind: 'has', key: String(key.value) });
        }
        const logical = expr.operator === '&&' || expr.operator === '||' || expr.operator === '??';
        visit(expr.left, logical);
        visit(expr.right, logical);
        return;
      }
      case 'unary':
        visit(expr.argument, expr.operator === '!');
        return;
      case 'call': {
        const name = dottedName(expr.callee);
        const arg = expr.args[0];
        const ref = arg && referenceOf(arg, leaves);
        if (name && PREDICATES.has(name) && ref && !ref.length) add(ref.leaf, { kind: 'predicate', name });
        if (name === 'Object.is' && expr.args.length === 2) {
          comparison(expr.args[0] as Expr, expr.args[1] as Expr, add, leaves, constants);
          comparison(expr.args[1] as Expr, expr.args[0] as Expr, add, leaves, constants);
        }
        for (const a of expr.args) visit(a, false);
        return;
      }
      case 'conditional':
        visit(expr.test, true);
        visit(expr.consequent, boolean);
        visit(expr.alternate, boolean);
        return;
      default:
        return;
    }
  };
  for (const condition of conditions) visit(condition, true);
  return facts;
}

function comparison(
  side: Expr,
  other: Expr,
  add: (leaf: LeafParam, fact: Fact) => void,
  leaves: readonly LeafParam[],
  constants: Env,
): void {
  if (side.kind === 'unary' && side.operator === 'typeof') {
    const ref = referenceOf(side.argument, leaves);
    const constant = constantOf(other, constants);
    if (ref && !ref.length && typeof constant?.value === 'string') add(ref.leaf, { kind: 'typeof', name: constant.value });
    return;
  }
  const ref = referenceOf(side, leaves);
  if (!ref) return;
  const constant = constantOf(other, constants);
  if (constant) {
    add(ref.leaf, { kind: 'compare', constant: constant.value, length: ref.length });
    return;
  }
  const otherRef = referenceOf(other, leaves);
  if (!otherRef || otherRef.length || ref.length) return;
  // `x !== x` is how older code asks for NaN.
  if (otherRef.leaf === ref.leaf) add(ref.leaf, { kind: 'predicate', name: 'Number.isNaN' });
  else add(ref.leaf, { kind: 'relative', other: otherRef.leaf });
}

/** The leaf's value when nothing is asked of it. */
export function typicalOf(type: TypeDesc): Arg {
  switch (type.kind) {
    case 'string':
      return 'text';
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'bigint':
      return 1n;
    case 'null':
      return null;
    case 'undefined':
    case 'void':
      return OMIT;
    case 'literal':
      return type.value;
    case 'array':
      return [];
    case 'record':
    case 'object':
      return {};
    case 'union': {
      const useful = type.members.find((m) => m.kind !== 'null' && m.kind !== 'undefined') ?? type.members[0];
      return useful ? typicalOf(useful) : OMIT;
    }
    default:
      return 'text';
  }
}

/** Without a declared type, what the conditions treat the leaf as. */
function inferredType(leaf: LeafParam, facts: readonly Fact[], defaultValue: Arg | undefined): TypeDesc {
  if (leaf.declared) return leaf.type;
  if (defaultValue !== undefined && defaultValue !== OMIT && defaultValue !== null) {
    const t = typeof defaultValue;
    if (t === 'string' || t === 'number' || t === 'boolean') return { kind: t };
    if (Array.isArray(defaultValue)) return { kind: 'array', element: { kind: 'unknown' } };
  }
  for (const fact of facts) {
    if (fact.kind === 'typeof' && ['string', 'number', 'boolean', 'object'].includes(fact.name)) return { kind: fact.name as 'string' };
    if (fact.kind === 'compare') {
      if (fact.length) return { kind: 'string' };
      if (typeof fact.constant === 'number') return { kind: 'number' };
      if (typeof fact.constant === 'bigint') return { kind: 'bigint' };
      if (typeof fact.constant === 'string') return { kind: 'string' };
    }
    if (fact.kind === 'arithmetic') return { kind: fact.bigint ? 'bigint' : 'number' };
    if (fact.kind === 'predicate')
      return fact.name === 'Array.isArray' ? { kind: 'array', element: { kind: 'unknown' } } : { kind: 'number' };
    if (fact.kind === 'relative') return { kind: 'number' };
  }
  // Nothing says what it is: anything goes in a search, nothing is a real value of it.
  return { kind: 'any' };
}

/** A leaf's default when it needs no other parameter (a literal, a module constant). */
export function defaultValueOf(leaf: LeafParam, constants: Env = new Map()): Arg | undefined {
  if (!leaf.defaultExpr) return undefined;
  const constant = constantOf(leaf.defaultExpr, constants);
  return constant ? constant.value : undefined;
}

export interface Candidates {
  pools: Map<string, Arg[]>;
  /** each leaf's declared type, else the type the conditions and default treat it as */
  types: Map<string, TypeDesc>;
}

export function candidatesOf(leaves: readonly LeafParam[], conditions: readonly Expr[], constants: Env = new Map()): Candidates {
  const facts = factsOf(conditions, leaves, constants);
  const pools = new Map<string, Arg[]>();
  const types = new Map<string, TypeDesc>();
  for (const leaf of leaves) {
    const own = facts.get(leaf.id) ?? [];
    const defaultValue = defaultValueOf(leaf, constants);
    const type = inferredType(leaf, own, defaultValue);
    types.set(leaf.id, type);
    const values: Arg[] = [];
    if (leaf.optional) values.push(OMIT);
    values.push(typicalOf(type));
    for (const fact of own) values.push(...valuesFor(fact, type, defaultValue, constants));
    values.push(null, OMIT, 1, 0, 'text', '', true, false, [], {});
    pools.set(leaf.id, dedupe(values).slice(0, MAX_POOL));
  }
  return { pools, types };
}

export function poolsOf(leaves: readonly LeafParam[], conditions: readonly Expr[], constants: Env = new Map()): Map<string, Arg[]> {
  return candidatesOf(leaves, conditions, constants).pools;
}

function valuesFor(fact: Fact, type: TypeDesc, defaultValue: Arg | undefined, constants: Env): Arg[] {
  switch (fact.kind) {
    case 'compare': {
      const c = fact.constant;
      if (fact.length && typeof c === 'number') {
        const lengths = [c - 1, c, c + 1].filter((n) => Number.isInteger(n) && n >= 0 && n <= MAX_LENGTH);
        return lengths.map((n) =>
          type.kind === 'array' ? new Array<Value>(n).fill(1) : ofLength(n, typeof defaultValue === 'string' ? defaultValue : undefined),
        );
      }
      if (typeof c === 'number') return Number.isFinite(c) ? [c - 1, c, c + 1] : [c];
      if (typeof c === 'bigint') return [c - 1n, c, c + 1n];
      if (typeof c === 'string') return [c, `${c}x`, ''];
      if (c === null || c === undefined) return [null, OMIT];
      if (typeof c === 'boolean') return [c, !c];
      return [c];
    }
    case 'relative': {
      const base = defaultValueOf(fact.other, constants);
      const anchor = typeof base === 'number' ? base : 1;
      return [anchor - 1, anchor, anchor + 1];
    }
    case 'typeof':
      return [ofType(fact.name), ...['number', 'string', 'boolean', 'undefined', 'object'].filter((n) => n !== fact.name).map(ofType)];
    case 'predicate':
      switch (fact.name) {
        case 'Number.isNaN':
        case 'isNaN':
          return [NaN];
        case 'Number.isInteger':
        case 'Number.isSafeInteger':
          return [1.5, 2 ** 53];
        case 'Number.isFinite':
        case 'isFinite':
          return [Infinity, NaN];
        default:
          return [[], 'text'];
      }
    case 'truthy':
      return [OMIT, ...falsyOf(type)];
    case 'has':
      return [{ [fact.key]: 1 }, {}];
    case 'arithmetic':
      return fact.bigint ? [1n, 0n] : [0];
  }
}

function ofType(name: string): Arg {
  switch (name) {
    case 'number':
      return 1;
    case 'string':
      return 'text';
    case 'boolean':
      return true;
    case 'undefined':
      return OMIT;
    case 'object':
      return {};
    case 'bigint':
      return 1n;
    default:
      return OMIT;
  }
}

function falsyOf(type: TypeDesc): Arg[] {
  switch (type.kind) {
    case 'string':
      return [''];
    case 'number':
      return [0, NaN];
    case 'boolean':
      return [false];
    default:
      return [null, '', 0, false];
  }
}

/** A string of `n` characters, from the default when there is one ('USD' -> 'US', 'USDX'). */
function ofLength(n: number, stem: string | undefined): string {
  const base = stem && stem.length > 0 ? stem : 'abcdefghij';
  if (n <= base.length) return base.slice(0, n);
  return base + 'x'.repeat(n - base.length);
}

function dedupe(values: Arg[]): Arg[] {
  const seen = new Set<string>();
  return values.filter((v) => {
    const key = valueKey(v);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
