/**
 * Syntax plain Node cannot load: JSX, and the TypeScript that type stripping does not erase (enums,
 * namespaces, parameter properties, `import x = require()`). mocha and node:test load modules
 * through Node itself, so such a module needs vitest or jest (which transform it).
 */

import type { Node } from 'web-tree-sitter';

const JSX = new Set(['jsx_element', 'jsx_self_closing_element', 'jsx_fragment']);
const NOT_ERASABLE: Readonly<Record<string, string>> = {
  enum_declaration: 'an enum',
  internal_module: 'a namespace',
  module: 'a namespace',
  import_alias: 'an `import x = ...` alias',
  import_require_clause: 'an `import x = require(...)`',
};

export function unloadableSyntax(root: Node): { line: number; what: string } | undefined {
  let found: { line: number; what: string } | undefined;
  const visit = (n: Node): void => {
    if (found) return;
    const line = n.startPosition.row + 1;
    if (JSX.has(n.type)) found = { line, what: 'JSX' };
    else if (NOT_ERASABLE[n.type] && !isDeclareOnly(n)) found = { line, what: NOT_ERASABLE[n.type] as string };
    else if (isParameterProperty(n)) found = { line, what: 'a constructor parameter property' };
    for (const child of n.namedChildren) if (child) visit(child);
  };
  visit(root);
  return found;
}

/** `constructor(private x)`, `constructor(readonly x)` */
function isParameterProperty(node: Node): boolean {
  if (node.type !== 'required_parameter' && node.type !== 'optional_parameter') return false;
  return node.children.some((c) => c?.type === 'accessibility_modifier' || c?.type === 'readonly' || c?.type === 'override_modifier');
}

/** The first line the parser could not read inside `node`. */
export function unreadableLine(node: Node): number | undefined {
  if (!node.hasError) return undefined;
  const visit = (n: Node): number | undefined => {
    if (n.type === 'ERROR' || n.isMissing) return n.startPosition.row + 1;
    for (const child of n.children) {
      if (!child?.hasError && !child?.isMissing) continue;
      const line = visit(child);
      if (line !== undefined) return line;
    }
    return undefined;
  };
  return visit(node) ?? node.startPosition.row + 1;
}

/** `declare enum` / `declare namespace` leave nothing behind, so stripping handles them. */
function isDeclareOnly(node: Node): boolean {
  return node.parent?.type === 'ambient_declaration';
}
