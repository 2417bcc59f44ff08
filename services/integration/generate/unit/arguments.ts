/**
 * Between the solver's leaf values, a call's argument list, and the names the function body sees:
 * building arguments, binding them the way JavaScript does (defaults apply to `undefined`,
 * destructuring `undefined` throws), and writing them as source.
 */

import { Crash, evaluate, Unsolvable } from './evaluate.ts';
import type { Binding, Env } from './evaluate.ts';
import type { Param } from './signature.ts';
import { conforms } from './type-desc.ts';
import { isPlainObject, OMIT, present, renderValue } from './values.ts';
import type { Arg, Value } from './values.ts';

export type Assignment = ReadonlyMap<string, Arg>;

export function buildArgs(params: readonly Param[], assignment: Assignment): Arg[] {
  const args = params.map((p) => build(p, assignment));
  while (args.length > 0 && args[args.length - 1] === OMIT) args.pop();
  return args;
}

function build(param: Param, assignment: Assignment): Arg {
  if (param.kind === 'leaf') return assignment.get(param.id) ?? OMIT;
  if (param.kind === 'opaque') {
    // An array pattern without a default must receive something it can destructure.
    return param.arrayPattern && !param.defaultExpr && !param.optional ? [] : OMIT;
  }
  const out: { [key: string]: Value } = {};
  for (const { key, param: child } of param.properties) {
    const value = build(child, assignment);
    if (value !== OMIT) out[key] = value;
  }
  if (Object.keys(out).length > 0) return out;
  // Destructuring `undefined` throws, so a pattern without a default always gets an object.
  if (param.destructured && !param.defaultExpr) return {};
  return param.optional ? OMIT : {};
}

/**
 * The names the body sees for these arguments, over the module's constants. Throws Crash where
 * JavaScript would throw.
 */
export function bindArgs(params: readonly Param[], args: readonly Arg[], constants: Env = new Map()): Env {
  const env: Env = new Map(constants);
  for (const [i, param] of params.entries()) bind(param, present(args[i] ?? OMIT), env);
  return env;
}

function bind(param: Param, arg: Value, env: Env): void {
  let value: Binding = { known: true, value: arg };
  if (arg === undefined && param.defaultExpr) value = defaulted(param.defaultExpr, env);
  if (param.kind === 'leaf') {
    if (param.access && param.access.path.length === 0) env.set(param.access.root, value);
    return;
  }
  if (param.kind === 'opaque') {
    for (const name of param.names) env.set(name, { known: false, reason: `${name} comes from a rest or array pattern` });
    return;
  }
  if (param.binding) env.set(param.binding, value);
  if (!param.destructured) return;
  if (!value.known) {
    for (const { param: child } of param.properties) unknownNames(child, value.reason, env);
    return;
  }
  const object = value.value;
  if (object == null) throw new Crash(`destructures ${String(object)}`);
  for (const { key, param: child } of param.properties) {
    if (child.kind === 'opaque') {
      bind(child, undefined, env);
      continue;
    }
    const property = propertyOf(object, key);
    if (property.known) bind(child, property.value, env);
    else unknownNames(child, property.reason, env);
  }
}

function defaulted(expr: Parameters<typeof evaluate>[0], env: Env): Binding {
  try {
    return { known: true, value: evaluate(expr, env) };
  } catch (error) {
    if (error instanceof Unsolvable) return { known: false, reason: `its default: ${error.message}` };
    throw error;
  }
}

function propertyOf(object: Value, key: string): Binding {
  if (isPlainObject(object)) {
    if (Object.hasOwn(object, key)) return { known: true, value: object[key] };
    return key in Object.prototype ? { known: false, reason: `.${key} is inherited` } : { known: true, value: undefined };
  }
  if ((typeof object === 'string' || Array.isArray(object)) && key === 'length') return { known: true, value: object.length };
  const boxed: unknown = Object(object);
  return key in (boxed as object) ? { known: false, reason: `.${key} of a ${typeof object}` } : { known: true, value: undefined };
}

function unknownNames(param: Param, reason: string, env: Env): void {
  if (param.kind === 'leaf') {
    if (param.access && param.access.path.length === 0) env.set(param.access.root, { known: false, reason });
  } else if (param.kind === 'opaque') for (const name of param.names) env.set(name, { known: false, reason });
  else {
    if (param.binding) env.set(param.binding, { known: false, reason });
    for (const { param: child } of param.properties) unknownNames(child, reason, env);
  }
}

/** The value each leaf gets from a call's arguments (OMIT where the call leaves it out). */
export function leafValues(params: readonly Param[], args: readonly Arg[]): Map<string, Arg> {
  const out = new Map<string, Arg>();
  const visit = (param: Param, arg: Arg): void => {
    if (param.kind === 'leaf') out.set(param.id, arg);
    else if (param.kind === 'object') {
      const value = present(arg);
      for (const { key, param: child } of param.properties)
        visit(child, isPlainObject(value) && Object.hasOwn(value, key) ? (value[key] as Value) : OMIT);
    }
  };
  for (const [i, p] of params.entries()) visit(p, args[i] ?? OMIT);
  return out;
}

/**
 * Arguments as source. In TypeScript a value its parameter's declared type does not allow (a
 * guard's `typeof x !== 'number'` case) gets `as never`, so the test still typechecks.
 */
export function renderArgs(params: readonly Param[], args: readonly Arg[], typescript: boolean): string {
  return args
    .map((arg, i) => {
      const text = renderValue(present(arg));
      const param = params[i];
      if (!typescript || !param || param.kind === 'opaque' || (!param.declared && param.kind === 'leaf')) return text;
      return conforms(arg, param.type) && conformsDeep(arg, param) ? text : `${text} as never`;
    })
    .join(', ');
}

/** Destructured properties carry their own declared types. */
function conformsDeep(arg: Arg, param: Param): boolean {
  if (param.kind !== 'object') return true;
  const value = present(arg);
  if (!isPlainObject(value)) return true;
  return param.properties.every(({ key, param: child }) => {
    if (child.kind === 'opaque' || !Object.hasOwn(value, key)) return true;
    const v = value[key] as Value;
    return (!child.declared || conforms(v, child.type)) && conformsDeep(v, child);
  });
}
