/**
 * Calls of the component written with literal arguments (`clampQuantity(3)`, `new Cart({ max: 2 })`)
 * read as values: what @example lines and the project's own uses give a test to repeat.
 */

import type { Node } from 'web-tree-sitter';
import { evaluate } from './evaluate.ts';
import { isLiteralExpr, toExpr } from './expr.ts';
import type { Value } from './values.ts';

export type LiteralArgs = { ok: true; args: Value[] } | { ok: false; reason: string };

/** The call node when `node` calls `names` (`await` and `new` allowed), else undefined. */
export function callOf(node: Node, names: ReadonlySet<string>, isClass: boolean): Node | undefined {
  let n: Node | null = node;
  while (n && (n.type === 'parenthesized_expression' || n.type === 'await_expression')) n = n.namedChildren[0] ?? null;
  if (!n) return undefined;
  const wanted = isClass ? 'new_expression' : 'call_expression';
  if (n.type !== wanted) return undefined;
  const callee = n.childForFieldName(isClass ? 'constructor' : 'function');
  return callee?.type === 'identifier' && names.has(callee.text) ? n : undefined;
}

export function literalArgs(call: Node): LiteralArgs {
  const list = call.childForFieldName('arguments');
  if (!list) return { ok: true, args: [] };
  if (list.type !== 'arguments') return { ok: false, reason: 'a tagged template call' };
  const args: Value[] = [];
  for (const arg of list.namedChildren) {
    if (!arg || arg.type === 'comment') continue;
    const value = literalValue(arg);
    if (!value.ok) return value;
    args.push(value.value);
  }
  return { ok: true, args };
}

export function literalValue(node: Node): { ok: true; value: Value } | { ok: false; reason: string } {
  const expr = toExpr(node);
  if (!isLiteralExpr(expr)) return { ok: false, reason: `\`${node.text.slice(0, 60)}\` is not a literal` };
  return { ok: true, value: evaluate(expr, new Map()) };
}
