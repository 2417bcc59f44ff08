/**
 * Expressions of the analysed code as a small tree the evaluator understands. Anything outside
 * that language becomes an `opaque` node, so a condition that uses it is known to be unsolvable
 * rather than guessed at.
 */

import type { Node } from 'web-tree-sitter';
import type { Value } from './values.ts';

export type Expr =
  | { kind: 'literal'; value: Value }
  | { kind: 'name'; name: string }
  | { kind: 'member'; object: Expr; property: string; optional: boolean }
  | { kind: 'index'; object: Expr; index: Expr; optional: boolean }
  | { kind: 'unary'; operator: string; argument: Expr }
  | { kind: 'binary'; operator: string; left: Expr; right: Expr }
  | { kind: 'conditional'; test: Expr; consequent: Expr; alternate: Expr }
  | { kind: 'call'; callee: Expr; args: Expr[]; optional: boolean }
  | { kind: 'array'; elements: Expr[] }
  | { kind: 'object'; entries: Array<[string, Expr]> }
  | { kind: 'template'; strings: string[]; expressions: Expr[] }
  | { kind: 'opaque'; text: string };

/** TypeScript wrappers that do not change the value. */
const SEE_THROUGH = new Set(['parenthesized_expression', 'as_expression', 'satisfies_expression', 'non_null_expression', 'type_assertion']);

export function toExpr(node: Node): Expr {
  const opaque: Expr = { kind: 'opaque', text: node.text };
  const named = node.namedChildren.filter((c): c is Node => c !== null && c.type !== 'comment');
  if (SEE_THROUGH.has(node.type)) {
    // type_assertion is `<T>x`: the value is the last child; the others' is the first.
    const inner = node.type === 'type_assertion' ? named[named.length - 1] : named[0];
    return inner ? toExpr(inner) : opaque;
  }
  switch (node.type) {
    case 'number': {
      const value = numberValue(node.text);
      return value === undefined ? opaque : { kind: 'literal', value };
    }
    case 'string': {
      const value = stringValue(node);
      return value === undefined ? opaque : { kind: 'literal', value };
    }
    case 'template_string':
      return templateOf(node) ?? opaque;
    case 'true':
      return { kind: 'literal', value: true };
    case 'false':
      return { kind: 'literal', value: false };
    case 'null':
      return { kind: 'literal', value: null };
    case 'undefined':
      return { kind: 'name', name: 'undefined' };
    case 'identifier':
    case 'shorthand_property_identifier':
      return { kind: 'name', name: node.text };
    case 'member_expression': {
      const object = node.childForFieldName('object');
      const property = node.childForFieldName('property');
      if (!object || !property || property.type === 'private_property_identifier') return opaque;
      return { kind: 'member', object: toExpr(object), property: property.text, optional: hasOptionalChain(node) };
    }
    case 'subscript_expression': {
      const object = node.childForFieldName('object');
      const index = node.childForFieldName('index');
      if (!object || !index) return opaque;
      return { kind: 'index', object: toExpr(object), index: toExpr(index), optional: hasOptionalChain(node) };
    }
    case 'unary_expression': {
      const operator = node.childForFieldName('operator')?.text;
      const argument = node.childForFieldName('argument');
      if (!operator || !argument || operator === 'delete') return opaque;
      return { kind: 'unary', operator, argument: toExpr(argument) };
    }
    case 'binary_expression': {
      const operator = node.childForFieldName('operator')?.text;
      const left = node.childForFieldName('left');
      const right = node.childForFieldName('right');
      if (!operator || !left || !right) return opaque;
      return { kind: 'binary', operator, left: toExpr(left), right: toExpr(right) };
    }
    case 'ternary_expression': {
      const test = node.childForFieldName('condition');
      const consequent = node.childForFieldName('consequence');
      const alternate = node.childForFieldName('alternative');
      if (!test || !consequent || !alternate) return opaque;
      return { kind: 'conditional', test: toExpr(test), consequent: toExpr(consequent), alternate: toExpr(alternate) };
    }
    case 'call_expression': {
      const callee = node.childForFieldName('function');
      const args = node.childForFieldName('arguments');
      if (!callee || !args || args.type !== 'arguments') return opaque;
      const list = args.namedChildren.filter((c): c is Node => c !== null && c.type !== 'comment');
      if (list.some((a) => a.type === 'spread_element')) return opaque;
      return { kind: 'call', callee: toExpr(callee), args: list.map(toExpr), optional: hasOptionalChain(node) };
    }
    case 'array': {
      if (named.some((c) => c.type === 'spread_element')) return opaque;
      // A hole (`[1, , 2]`) has no node: count commas against elements to notice it.
      const commas = node.children.filter((c) => c?.type === ',').length;
      if (named.length > 0 && commas > named.length) return opaque;
      if (named.length === 0 && commas > 0) return opaque;
      return { kind: 'array', elements: named.map(toExpr) };
    }
    case 'object':
      return objectOf(named) ?? opaque;
    default:
      return opaque;
  }
}

function objectOf(members: Node[]): Expr | undefined {
  const entries: Array<[string, Expr]> = [];
  for (const member of members) {
    if (member.type === 'shorthand_property_identifier') {
      entries.push([member.text, { kind: 'name', name: member.text }]);
      continue;
    }
    if (member.type !== 'pair') return undefined;
    const key = member.childForFieldName('key');
    const value = member.childForFieldName('value');
    if (!key || !value) return undefined;
    let name: string | undefined;
    if (key.type === 'property_identifier') name = key.text;
    else if (key.type === 'string') name = stringValue(key);
    else if (key.type === 'number') {
      const n = numberValue(key.text);
      name = typeof n === 'number' ? String(n) : undefined;
    }
    // `__proto__: x` sets the prototype rather than a property: not plain data.
    if (name === undefined || name === '__proto__') return undefined;
    entries.push([name, toExpr(value)]);
  }
  return { kind: 'object', entries };
}

function templateOf(node: Node): Expr | undefined {
  const strings: string[] = [''];
  const expressions: Expr[] = [];
  for (const child of node.namedChildren) {
    if (!child) continue;
    if (child.type === 'string_fragment') strings[strings.length - 1] += child.text;
    else if (child.type === 'escape_sequence') {
      const decoded = decodeEscape(child.text);
      if (decoded === undefined) return undefined;
      strings[strings.length - 1] += decoded;
    } else if (child.type === 'template_substitution') {
      const inner = child.namedChildren.find((c): c is Node => c !== null && c.type !== 'comment');
      if (!inner) return undefined;
      expressions.push(toExpr(inner));
      strings.push('');
    } else if (child.type !== 'comment') return undefined;
  }
  return { kind: 'template', strings, expressions };
}

function hasOptionalChain(node: Node): boolean {
  return node.children.some((c) => c?.type === 'optional_chain' || c?.type === '?.');
}

export function numberValue(text: string): number | bigint | undefined {
  const clean = text.replace(/_/g, '');
  if (clean.endsWith('n')) {
    try {
      return BigInt(clean.slice(0, -1));
    } catch {
      return undefined;
    }
  }
  // A legacy octal (`010`) is not what Number() reads it as.
  if (/^0\d/.test(clean)) return undefined;
  const value = Number(clean);
  return Number.isNaN(value) ? undefined : value;
}

/** The text of a string literal node, escapes decoded. */
export function stringValue(node: Node): string | undefined {
  let text = '';
  for (const child of node.namedChildren) {
    if (!child) continue;
    if (child.type === 'string_fragment') text += child.text;
    else if (child.type === 'escape_sequence') {
      const decoded = decodeEscape(child.text);
      if (decoded === undefined) return undefined;
      text += decoded;
    } else return undefined;
  }
  return text;
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', v: '\v', '0': '\0' };

function decodeEscape(text: string): string | undefined {
  const body = text.slice(1);
  if (body.startsWith('\n') || body.startsWith('\r')) return '';
  const simple = SIMPLE_ESCAPES[body];
  if (simple !== undefined) return simple;
  const hex = /^x([0-9a-fA-F]{2})$/.exec(body) ?? /^u([0-9a-fA-F]{4})$/.exec(body) ?? /^u\{([0-9a-fA-F]{1,6})\}$/.exec(body);
  if (hex?.[1]) {
    const code = parseInt(hex[1], 16);
    return code <= 0x10ffff ? String.fromCodePoint(code) : undefined;
  }
  return body.length === 1 && !/[1-9]/.test(body) ? body : undefined;
}

/** Literal syntax only: what a test can copy as a value (no names but NaN, Infinity, undefined). */
export function isLiteralExpr(expr: Expr): boolean {
  switch (expr.kind) {
    case 'literal':
      return true;
    case 'name':
      return expr.name === 'NaN' || expr.name === 'Infinity' || expr.name === 'undefined';
    case 'unary':
      return (
        (expr.operator === '-' || expr.operator === '+') &&
        (expr.argument.kind === 'literal'
          ? typeof expr.argument.value === 'number' || typeof expr.argument.value === 'bigint'
          : expr.argument.kind === 'name' && expr.argument.name === 'Infinity')
      );
    case 'array':
      return expr.elements.every(isLiteralExpr);
    case 'object':
      return expr.entries.every(([, v]) => isLiteralExpr(v));
    case 'template':
      return expr.expressions.length === 0;
    default:
      return false;
  }
}

/** Every name the expression reads, for knowing which parameters a condition depends on. */
export function namesIn(expr: Expr, out: Set<string> = new Set()): Set<string> {
  switch (expr.kind) {
    case 'name':
      out.add(expr.name);
      break;
    case 'member':
      namesIn(expr.object, out);
      break;
    case 'index':
      namesIn(expr.object, out);
      namesIn(expr.index, out);
      break;
    case 'unary':
      namesIn(expr.argument, out);
      break;
    case 'binary':
      namesIn(expr.left, out);
      namesIn(expr.right, out);
      break;
    case 'conditional':
      namesIn(expr.test, out);
      namesIn(expr.consequent, out);
      namesIn(expr.alternate, out);
      break;
    case 'call':
      namesIn(expr.callee, out);
      for (const a of expr.args) namesIn(a, out);
      break;
    case 'array':
      for (const e of expr.elements) namesIn(e, out);
      break;
    case 'object':
      for (const [, v] of expr.entries) namesIn(v, out);
      break;
    case 'template':
      for (const e of expr.expressions) namesIn(e, out);
      break;
    default:
      break;
  }
  return out;
}

/** One line of source text for titles and reasons. */
export function oneLine(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/** Source-like text of an expression, for test titles. */
export function printExpr(expr: Expr): string {
  switch (expr.kind) {
    case 'literal':
      return typeof expr.value === 'string'
        ? `'${expr.value}'`
        : typeof expr.value === 'bigint'
          ? `${expr.value}n`
          : (JSON.stringify(expr.value) ?? 'undefined');
    case 'name':
      return expr.name;
    case 'member':
      return `${printExpr(expr.object)}${expr.optional ? '?.' : '.'}${expr.property}`;
    case 'index':
      return `${printExpr(expr.object)}[${printExpr(expr.index)}]`;
    case 'unary':
      return expr.operator.length > 1 ? `${expr.operator} ${printExpr(expr.argument)}` : `${expr.operator}${printExpr(expr.argument)}`;
    case 'binary':
      return `${printExpr(expr.left)} ${expr.operator} ${printExpr(expr.right)}`;
    case 'conditional':
      return `${printExpr(expr.test)} ? ${printExpr(expr.consequent)} : ${printExpr(expr.alternate)}`;
    case 'call':
      return `${printExpr(expr.callee)}(${expr.args.map(printExpr).join(', ')})`;
    case 'array':
      return `[${expr.elements.map(printExpr).join(', ')}]`;
    case 'object':
      return `{ ${expr.entries.map(([k, v]) => `${k}: ${printExpr(v)}`).join(', ')} }`;
    case 'template':
      return '`…`';
    case 'opaque':
      return oneLine(expr.text, 40);
  }
}
