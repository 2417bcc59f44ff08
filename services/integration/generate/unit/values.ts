/**
 * The values the generator reasons about and writes into tests: plain data only (no functions,
 * symbols or class instances), so evaluating conditions over them can never run customer code.
 */

import { jsString } from '../code-literals.ts';

export type Value = undefined | null | boolean | number | bigint | string | Value[] | { [key: string]: Value };

/** An argument or property left out of the call (a default, or `undefined`, applies). */
export const OMIT: unique symbol = Symbol('omit');
export type Arg = Value | typeof OMIT;

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

export function isPlainObject(value: unknown): value is { [key: string]: Value } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A single-quoted JavaScript string literal: the style of the generated unit tests. */
export function quote(text: string): string {
  return jsString(text, "'");
}

/** Source text that evaluates to `value`: -0, NaN, Infinity, undefined and bigint included. */
export function renderValue(value: Value): string {
  if (value === undefined) return 'undefined';
  if (value === null) return 'null';
  if (typeof value === 'string') return quote(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number') {
    if (Object.is(value, -0)) return '-0';
    return String(value);
  }
  if (Array.isArray(value)) return `[${value.map(renderValue).join(', ')}]`;
  const entries = Object.entries(value);
  if (entries.length === 0) return '{}';
  return `{ ${entries.map(([key, v]) => `${renderKey(key)}: ${renderValue(v)}`).join(', ')} }`;
}

function renderKey(key: string): string {
  // A literal `__proto__:` key would set the prototype instead of making a property.
  if (key === '__proto__') return `[${quote(key)}]`;
  return IDENTIFIER.test(key) ? key : quote(key);
}

/** Identity for de-duplication: tells NaN, -0, undefined and nested values apart. */
export function valueKey(value: Arg): string {
  if (value === OMIT) return '<omit>';
  if (value === undefined) return 'undefined';
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : String(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map(valueKey).join(',')}]`;
  return `{${Object.entries(value)
    .map(([k, v]) => `${JSON.stringify(k)}:${valueKey(v)}`)
    .join(',')}}`;
}

export function sameValue(a: Arg, b: Arg): boolean {
  return valueKey(a) === valueKey(b);
}

/** The value at a call site: an omitted argument is `undefined`. */
export function present(arg: Arg): Value {
  return arg === OMIT ? undefined : arg;
}
