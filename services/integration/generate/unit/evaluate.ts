/**
 * The condition language's evaluator: JavaScript semantics over plain data, with a fixed list of
 * pure built-ins. It decides whether chosen arguments satisfy a condition without loading or
 * running the customer's module; whatever it does not model is reported, never guessed.
 */

import type { Expr } from './expr.ts';
import { isPlainObject } from './values.ts';
import type { Value } from './values.ts';

export type Binding = { known: true; value: Value } | { known: false; reason: string };
export type Env = Map<string, Binding>;

/** The evaluator does not model this expression (an unknown name, a call it cannot vouch for). */
export class Unsolvable extends Error {
  override name = 'Unsolvable';
}

/** The analysed code itself would throw here (reading a property of null, mixing bigint and number). */
export class Crash extends Error {
  override name = 'Crash';
}

const GLOBALS: ReadonlyMap<string, Value> = new Map<string, Value>([
  ['undefined', undefined],
  ['NaN', NaN],
  ['Infinity', Infinity],
]);

/** Built-ins that only compute from their arguments; coercions of plain data stay inside the engine. */
const PURE_FUNCTIONS: Readonly<Record<string, (...args: Value[]) => Value>> = {
  'Number.isNaN': (v) => Number.isNaN(v),
  'Number.isInteger': (v) => Number.isInteger(v),
  'Number.isFinite': (v) => Number.isFinite(v),
  'Number.isSafeInteger': (v) => Number.isSafeInteger(v),
  // The customer's code calls the global isNaN/isFinite (which coerce): the evaluator must too.
  // biome-ignore lint/suspicious/noGlobalIsNan: emulates the global the evaluated code names
  isNaN: (v) => isNaN(v as number),
  // biome-ignore lint/suspicious/noGlobalIsFinite: emulates the global the evaluated code names
  isFinite: (v) => isFinite(v as number),
  'Array.isArray': (v) => Array.isArray(v),
  'Math.floor': (v) => Math.floor(v as number),
  'Math.ceil': (v) => Math.ceil(v as number),
  'Math.round': (v) => Math.round(v as number),
  'Math.trunc': (v) => Math.trunc(v as number),
  'Math.abs': (v) => Math.abs(v as number),
  'Math.sign': (v) => Math.sign(v as number),
  'Math.min': (...v) => Math.min(...(v as number[])),
  'Math.max': (...v) => Math.max(...(v as number[])),
  String: (...v) => (v.length === 0 ? '' : String(v[0])),
  Number: (...v) => (v.length === 0 ? 0 : Number(v[0])),
  Boolean: (v) => Boolean(v),
  'Object.is': (a, b) => Object.is(a, b),
  'Object.keys': (v) => {
    if (!isPlainObject(v) && !Array.isArray(v)) throw new Unsolvable('Object.keys of a non-object');
    return Object.keys(v);
  },
};

const STRING_METHODS = new Set([
  'trim',
  'trimStart',
  'trimEnd',
  'toLowerCase',
  'toUpperCase',
  'includes',
  'startsWith',
  'endsWith',
  'indexOf',
  'at',
  'charAt',
]);
const ARRAY_METHODS = new Set(['includes', 'indexOf', 'at']);

export function evaluate(expr: Expr, env: Env): Value {
  switch (expr.kind) {
    case 'literal':
      return expr.value;
    case 'name':
      return lookup(expr.name, env);
    case 'member':
      return member(evaluate(expr.object, env), expr.property, expr.optional);
    case 'index': {
      const object = evaluate(expr.object, env);
      if (expr.optional && object == null) return undefined;
      const index = evaluate(expr.index, env);
      if (object == null) throw new Crash(`reads [${String(index)}] of ${String(object)}`);
      if ((typeof object === 'string' || Array.isArray(object)) && typeof index === 'number') {
        return Number.isInteger(index) && index >= 0 && index < object.length ? (object[index] as Value) : undefined;
      }
      if (typeof index === 'string' || typeof index === 'number') return member(object, String(index), false);
      throw new Unsolvable('an index the evaluator does not model');
    }
    case 'unary':
      return unary(expr.operator, expr.argument, env);
    case 'binary':
      return binary(expr, env);
    case 'conditional':
      return evaluate(expr.test, env) ? evaluate(expr.consequent, env) : evaluate(expr.alternate, env);
    case 'call':
      return call(expr, env);
    case 'array':
      return expr.elements.map((e) => evaluate(e, env));
    case 'object': {
      const out: { [key: string]: Value } = {};
      for (const [key, value] of expr.entries) out[key] = evaluate(value, env);
      return out;
    }
    case 'template': {
      let text = expr.strings[0] ?? '';
      expr.expressions.forEach((e, i) => {
        const value = evaluate(e, env);
        text += guarded(() => String(value)) + (expr.strings[i + 1] ?? '');
      });
      return text;
    }
    case 'opaque':
      throw new Unsolvable(`\`${expr.text.slice(0, 60)}\` is outside what the generator evaluates`);
  }
}

function lookup(name: string, env: Env): Value {
  const binding = env.get(name);
  if (binding) {
    if (binding.known) return binding.value;
    throw new Unsolvable(binding.reason);
  }
  if (GLOBALS.has(name)) return GLOBALS.get(name);
  throw new Unsolvable(`${name} is not a parameter or a local the generator can evaluate`);
}

function member(object: Value, property: string, optional: boolean): Value {
  if (object == null) {
    if (optional) return undefined;
    throw new Crash(`reads .${property} of ${String(object)}`);
  }
  if (typeof object === 'string' || Array.isArray(object)) {
    if (property === 'length') return object.length;
    throw new Unsolvable(`.${property} of a ${Array.isArray(object) ? 'array' : 'string'}`);
  }
  if (isPlainObject(object)) {
    if (Object.hasOwn(object, property)) return object[property];
    // An inherited member (toString, constructor) is a function: outside plain data.
    if (property in Object.prototype) throw new Unsolvable(`.${property} of an object`);
    return undefined;
  }
  throw new Unsolvable(`.${property} of a ${typeof object}`);
}

function unary(operator: string, argument: Expr, env: Env): Value {
  if (operator === 'typeof' && argument.kind === 'name' && !env.has(argument.name) && !GLOBALS.has(argument.name)) {
    // `typeof window` is how code asks whether a global exists: not something arguments decide.
    throw new Unsolvable(`typeof ${argument.name} depends on the environment`);
  }
  const value = evaluate(argument, env);
  switch (operator) {
    case '!':
      return !value;
    case 'typeof':
      return typeof value;
    case 'void':
      return undefined;
    case '-':
      return guarded(() => -(value as number));
    case '+':
      return guarded(() => +(value as number));
    case '~':
      return guarded(() => ~(value as number));
    default:
      throw new Unsolvable(`the ${operator} operator`);
  }
}

function binary(expr: Extract<Expr, { kind: 'binary' }>, env: Env): Value {
  const { operator } = expr;
  if (operator === '&&' || operator === '||' || operator === '??') {
    const left = evaluate(expr.left, env);
    if (operator === '&&') return left ? evaluate(expr.right, env) : left;
    if (operator === '||') return left ? left : evaluate(expr.right, env);
    return left ?? evaluate(expr.right, env);
  }
  const a = evaluate(expr.left, env) as never;
  const b = evaluate(expr.right, env) as never;
  return guarded((): Value => {
    switch (operator) {
      case '===':
        return a === b;
      case '!==':
        return a !== b;
      // Loose equality is what the evaluated code wrote (`p == null`): it is emulated as written.
      case '==':
        // biome-ignore lint/suspicious/noDoubleEquals: emulates the operator of the evaluated code
        return a == b;
      case '!=':
        // biome-ignore lint/suspicious/noDoubleEquals: emulates the operator of the evaluated code
        return a != b;
      case '<':
        return a < b;
      case '<=':
        return a <= b;
      case '>':
        return a > b;
      case '>=':
        return a >= b;
      case '+':
        return (a as number) + (b as number);
      case '-':
        return (a as number) - (b as number);
      case '*':
        return (a as number) * (b as number);
      case '/':
        return (a as number) / (b as number);
      case '%':
        return (a as number) % (b as number);
      case '**':
        return (a as number) ** (b as number);
      case 'in':
        // On plain data `in` only looks up properties; on a primitive JavaScript throws a TypeError.
        if (typeof b !== 'object' || b === null) throw new Crash(`uses 'in' on ${String(b)}`);
        return (a as string) in (b as object);
      default:
        throw new Unsolvable(`the ${operator} operator`);
    }
  });
}

function call(expr: Extract<Expr, { kind: 'call' }>, env: Env): Value {
  const name = dottedName(expr.callee);
  const pure = name !== undefined && !env.has(name.split('.')[0] as string) ? PURE_FUNCTIONS[name] : undefined;
  if (pure) {
    const args = expr.args.map((a) => evaluate(a, env));
    return guarded(() => pure(...args));
  }
  if (expr.callee.kind === 'member') {
    const receiver = evaluate(expr.callee.object, env);
    const method = expr.callee.property;
    if (receiver == null && (expr.callee.optional || expr.optional)) return undefined;
    const args = expr.args.map((a) => evaluate(a, env));
    if (args.some((a) => typeof a === 'object' && a !== null)) throw new Unsolvable(`${method}() with an object argument`);
    if (typeof receiver === 'string' && STRING_METHODS.has(method)) {
      const fn = String.prototype[method as 'trim'] as (...a: unknown[]) => Value;
      return guarded(() => fn.apply(receiver, args));
    }
    if (Array.isArray(receiver) && ARRAY_METHODS.has(method)) {
      const fn = Array.prototype[method as 'includes'] as (...a: unknown[]) => Value;
      return guarded(() => fn.apply(receiver, args));
    }
    if (receiver == null) throw new Crash(`calls .${method}() of ${String(receiver)}`);
    throw new Unsolvable(`.${method}() is not a call the generator evaluates`);
  }
  throw new Unsolvable(`${name ?? 'this call'}() is not a call the generator evaluates`);
}

function dottedName(expr: Expr): string | undefined {
  if (expr.kind === 'name') return expr.name;
  if (expr.kind === 'member' && !expr.optional) {
    const object = dottedName(expr.object);
    return object === undefined ? undefined : `${object}.${expr.property}`;
  }
  return undefined;
}

/** A TypeError from the engine (bigint mixed with number, Symbol coercion) is the code's own error. */
function guarded<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (error instanceof Unsolvable || error instanceof Crash) throw error;
    throw new Crash(error instanceof Error ? error.message : String(error));
  }
}

/** Evaluates as a condition: `undefined` when the evaluator cannot decide it. */
export function truth(expr: Expr, env: Env): boolean | undefined {
  try {
    return Boolean(evaluate(expr, env));
  } catch (error) {
    if (error instanceof Unsolvable || error instanceof Crash) return undefined;
    throw error;
  }
}
