/**
 * Declared types (TypeScript annotations and JSDoc `{type}` expressions, one small parser for both):
 * what kind of value to pass for a parameter, and what a result can be checked against.
 */

import { isPlainObject, OMIT } from './values.ts';
import type { Arg, Value } from './values.ts';

export type TypeDesc =
  | {
      kind:
        | 'string'
        | 'number'
        | 'boolean'
        | 'bigint'
        | 'symbol'
        | 'null'
        | 'undefined'
        | 'void'
        | 'any'
        | 'unknown'
        | 'object'
        | 'function'
        | 'never';
    }
  | { kind: 'literal'; value: string | number | boolean }
  | { kind: 'array'; element: TypeDesc }
  | { kind: 'record'; properties: PropertyType[] }
  | { kind: 'union'; members: TypeDesc[] }
  | { kind: 'promise'; inner: TypeDesc }
  | { kind: 'named'; name: string };

export interface PropertyType {
  name: string;
  type: TypeDesc;
  optional: boolean;
}

export const UNKNOWN: TypeDesc = { kind: 'unknown' };

const SIMPLE: Readonly<Record<string, TypeDesc['kind']>> = {
  string: 'string',
  String: 'string',
  number: 'number',
  Number: 'number',
  boolean: 'boolean',
  Boolean: 'boolean',
  bigint: 'bigint',
  BigInt: 'bigint',
  symbol: 'symbol',
  null: 'null',
  undefined: 'undefined',
  void: 'void',
  any: 'any',
  unknown: 'unknown',
  never: 'never',
  object: 'object',
  Object: 'object',
  Function: 'function',
  function: 'function',
};

/** JSDoc's optional marker (`{number=}`) is reported separately from the type. */
export function parseJsDocType(text: string): { type: TypeDesc; optional: boolean } {
  const trimmed = text.trim();
  if (trimmed.endsWith('=')) return { type: parseType(trimmed.slice(0, -1)), optional: true };
  return { type: parseType(trimmed), optional: false };
}

/** Never throws: a type it cannot read is `named` (nothing is assumed about it). */
export function parseType(text: string): TypeDesc {
  try {
    const parser = new TypeParser(text);
    const type = parser.union();
    if (!parser.done()) return { kind: 'named', name: text.trim() };
    return type;
  } catch {
    return { kind: 'named', name: text.trim() };
  }
}

const TOKEN = /\s*(\.\.\.|=>|[A-Za-z_$][\w$.]*|'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|[{}[\]()<>|&,;:?=*!])/y;

class TypeParser {
  private readonly tokens: string[] = [];
  private at = 0;

  constructor(text: string) {
    TOKEN.lastIndex = 0;
    let match: RegExpExecArray | null;
    while (TOKEN.lastIndex < text.length && (match = TOKEN.exec(text)) !== null) this.tokens.push(match[1] as string);
    if (text.slice(TOKEN.lastIndex).trim() !== '') throw new Error('unreadable type');
  }

  done(): boolean {
    return this.at >= this.tokens.length;
  }

  private peek(): string | undefined {
    return this.tokens[this.at];
  }

  private take(expected?: string): string {
    const token = this.tokens[this.at];
    if (token === undefined || (expected !== undefined && token !== expected)) throw new Error(`expected ${expected ?? 'a type'}`);
    this.at++;
    return token;
  }

  union(): TypeDesc {
    if (this.peek() === '|') this.take();
    const members = [this.intersection()];
    while (this.peek() === '|') {
      this.take();
      members.push(this.intersection());
    }
    return members.length === 1 ? (members[0] as TypeDesc) : { kind: 'union', members };
  }

  private intersection(): TypeDesc {
    const first = this.postfix();
    if (this.peek() !== '&') return first;
    while (this.peek() === '&') {
      this.take();
      this.postfix();
    }
    return { kind: 'named', name: 'intersection' };
  }

  private postfix(): TypeDesc {
    let type = this.primary();
    while (this.peek() === '[' && this.tokens[this.at + 1] === ']') {
      this.at += 2;
      type = { kind: 'array', element: type };
    }
    return type;
  }

  private primary(): TypeDesc {
    const token = this.take();
    if (token === '(') {
      // `(a: T) => R` is a function type; `(T)` is grouping.
      const start = this.at;
      let depth = 1;
      while (depth > 0) {
        const t = this.take();
        if (t === '(') depth++;
        else if (t === ')') depth--;
      }
      if (this.peek() === '=>') {
        this.take();
        this.union();
        return { kind: 'function' };
      }
      const inner = new TypeParser('');
      inner.tokens.push(...this.tokens.slice(start, this.at - 1));
      const type = inner.union();
      if (!inner.done()) throw new Error('unreadable group');
      return type;
    }
    if (token === '{') return this.record();
    if (token === '?') return { kind: 'union', members: [this.primary(), { kind: 'null' }] };
    if (token === '!') return this.primary();
    if (token === '*') return { kind: 'any' };
    // `readonly string[]`: the same values.
    if (token === 'readonly' && this.peek() !== undefined && /^[A-Za-z_$({]/.test(this.peek() as string)) return this.postfix();
    if (token.startsWith("'") || token.startsWith('"'))
      return { kind: 'literal', value: JSON.parse(`"${token.slice(1, -1).replace(/\\'/g, "'").replace(/"/g, '\\"')}"`) as string };
    if (/^-?\d/.test(token)) return { kind: 'literal', value: Number(token) };
    if (token === 'true' || token === 'false') return { kind: 'literal', value: token === 'true' };
    if (!/^[A-Za-z_$]/.test(token)) throw new Error(`unexpected ${token}`);
    if (token === 'typeof' || token === 'keyof') {
      this.primary();
      return { kind: 'named', name: token };
    }
    const args = this.peek() === '<' ? this.typeArguments() : [];
    if (token === 'Array' || token === 'ReadonlyArray') return { kind: 'array', element: args[0] ?? UNKNOWN };
    if (token === 'Promise' || token === 'PromiseLike') return { kind: 'promise', inner: args[0] ?? UNKNOWN };
    if (token === 'Record') return { kind: 'object' };
    const simple = SIMPLE[token];
    if (simple && args.length === 0) return { kind: simple } as TypeDesc;
    return { kind: 'named', name: token };
  }

  private typeArguments(): TypeDesc[] {
    this.take('<');
    const args = [this.union()];
    while (this.peek() === ',') {
      this.take();
      args.push(this.union());
    }
    this.take('>');
    return args;
  }

  private record(): TypeDesc {
    const properties: PropertyType[] = [];
    while (this.peek() !== '}') {
      let name = this.take();
      if (name === 'readonly' && this.peek() !== ':' && this.peek() !== '?') name = this.take();
      if (name === '[') throw new Error('index signature');
      if (name.startsWith("'") || name.startsWith('"')) name = name.slice(1, -1);
      if (!/^[A-Za-z_$\d]/.test(name)) throw new Error('unreadable property');
      let optional = false;
      if (this.peek() === '?') {
        this.take();
        optional = true;
      }
      let type: TypeDesc = UNKNOWN;
      if (this.peek() === ':') {
        this.take();
        type = this.union();
      } else if (this.peek() === '(') throw new Error('method signature');
      if (type.kind === 'union' && type.members.some((m) => m.kind === 'undefined')) optional = true;
      properties.push({ name, type, optional });
      if (this.peek() === ',' || this.peek() === ';') this.take();
      else if (this.peek() !== '}') throw new Error('expected , or }');
    }
    this.take('}');
    return { kind: 'record', properties };
  }
}

/** Whether a TypeScript caller could pass `value` without a cast. */
export function conforms(value: Arg, type: TypeDesc): boolean {
  const v: Value = value === OMIT ? undefined : value;
  switch (type.kind) {
    case 'string':
    case 'number':
    case 'boolean':
    case 'bigint':
      return typeof v === type.kind;
    case 'null':
      return v === null;
    case 'undefined':
    case 'void':
      return v === undefined;
    case 'literal':
      return v === type.value;
    case 'array':
      return Array.isArray(v) && v.every((e) => conforms(e, type.element));
    case 'record':
      return (
        isPlainObject(v) &&
        type.properties.every((p) =>
          v[p.name] === undefined ? p.optional || conforms(undefined, p.type) : conforms(v[p.name] as Value, p.type),
        )
      );
    case 'union':
      return type.members.some((m) => conforms(v, m));
    case 'object':
      return typeof v === 'object' && v !== null;
    case 'symbol':
    case 'function':
    case 'never':
    case 'promise':
      return false;
    case 'any':
    case 'unknown':
      return true;
    case 'named':
      // Nothing is known about it: in TypeScript a test passes values to it with a cast.
      return false;
  }
}

/** Types the generator can make real values of (not service objects, functions or unknown names). */
export function constructible(type: TypeDesc): boolean {
  switch (type.kind) {
    case 'string':
    case 'number':
    case 'boolean':
    case 'bigint':
    case 'null':
    case 'undefined':
    case 'void':
    case 'literal':
      return true;
    case 'array':
      return constructible(type.element);
    case 'record':
      return type.properties.every((p) => constructible(p.type));
    case 'union':
      return type.members.some(constructible);
    default:
      return false;
  }
}

/** `value` is a real value of `type`, not a stand-in for something the generator cannot build. */
export function genuine(value: Arg, type: TypeDesc): boolean {
  if (type.kind === 'union') return type.members.some((m) => genuine(value, m));
  // An empty array is a real array of anything.
  if (type.kind === 'array' && Array.isArray(value) && value.length === 0) return true;
  return constructible(type) && conforms(value, type);
}

/** How a result can be checked against its declared type without running anything else. */
export type TypeCheck = { kind: 'typeof'; names: string[] } | { kind: 'array' } | { kind: 'instance'; ctor: string };

/** `classNames` are the classes a test can reference (exported from the module). */
export function typeCheckOf(type: TypeDesc | undefined, classNames: ReadonlySet<string> = new Set()): TypeCheck | undefined {
  if (!type) return undefined;
  if (type.kind === 'promise') return typeCheckOf(type.inner, classNames);
  if (type.kind === 'array') return { kind: 'array' };
  if (type.kind === 'named') return classNames.has(type.name) ? { kind: 'instance', ctor: type.name } : undefined;
  const names = typeofNames(type);
  return names && names.length > 0 ? { kind: 'typeof', names: [...new Set(names)].sort() } : undefined;
}

function typeofNames(type: TypeDesc): string[] | undefined {
  switch (type.kind) {
    case 'string':
    case 'number':
    case 'boolean':
    case 'bigint':
    case 'symbol':
    case 'undefined':
    case 'function':
    case 'object':
      return [type.kind];
    case 'void':
      return ['undefined'];
    case 'null':
    case 'record':
    case 'array':
      return ['object'];
    case 'literal':
      return [typeof type.value];
    case 'union': {
      const out: string[] = [];
      for (const m of type.members) {
        const names = typeofNames(m);
        if (!names) return undefined;
        out.push(...names);
      }
      return out;
    }
    default:
      return undefined;
  }
}

export function describeType(type: TypeDesc): string {
  switch (type.kind) {
    case 'literal':
      return JSON.stringify(type.value);
    case 'array':
      return type.element.kind === 'union' ? `(${describeType(type.element)})[]` : `${describeType(type.element)}[]`;
    case 'record':
      return `{ ${type.properties.map((p) => `${p.name}${p.optional ? '?' : ''}: ${describeType(p.type)}`).join('; ')} }`;
    case 'union':
      return type.members.map(describeType).join(' | ');
    case 'promise':
      return `Promise<${describeType(type.inner)}>`;
    case 'named':
      return type.name;
    default:
      return type.kind;
  }
}
