/**
 * The statements of one level (a file, a class body) as row ranges, see-through wrappers flattened,
 * with leading doc comments and decorators joined to the declaration they describe.
 */

import type { Node } from 'web-tree-sitter';
import { namedChildren, rowsOf } from './syntax-rules.ts';
import type { Declaration, SyntaxRules } from './syntax-rules.ts';

export interface Item {
  /** first row, leading comments included once attached */
  start: number;
  end: number;
  decl?: Declaration;
  leading: boolean;
  /** a doc comment (slash-star-star): attaches across one blank line, a common JavaScript style */
  doc: boolean;
  /** a leading comment or decorator now part of the declaration after it */
  attached: boolean;
}

const DOC_COMMENT = /^\/\*\*(?!\/)/;

export function itemsOf(parent: Node, rules: SyntaxRules): Item[] {
  const items = flatten(parent, rules);
  attachLeading(items);
  return items;
}

function flatten(parent: Node, rules: SyntaxRules): Item[] {
  const items: Item[] = [];
  for (const child of namedChildren(parent)) {
    const [start, end] = rowsOf(child);
    const members = rules.transparent?.(child);
    if (!members) {
      const leading = rules.isLeading(child);
      const doc = leading && DOC_COMMENT.test(child.text);
      items.push({ start, end, decl: rules.declaration(child), leading, doc, attached: false });
      continue;
    }
    // The wrapper's own lines (`namespace x {`, `#ifdef X`, the closing `}`) stay loose statements.
    const inner = flatten(members, rules);
    const first = inner[0];
    const last = inner[inner.length - 1];
    if (!first || !last) {
      items.push({ start, end, leading: false, doc: false, attached: false });
      continue;
    }
    if (start < first.start) items.push({ start, end: first.start - 1, leading: false, doc: false, attached: false });
    // The closing `}` or `#endif` joins the last member rather than becoming a chunk of its own;
    // the last declaration, when all that follows it is on its own last row (`int f() __THROW;`).
    const before = inner[inner.length - 2];
    const closer = before?.decl && before.end >= last.start ? before : last;
    closer.end = Math.max(closer.end, end);
    items.push(...inner);
  }
  return items;
}

/**
 * A run of comments/decorators with no blank line before a declaration belongs to it (a doc
 * comment may have one blank line, a common JavaScript style), and so do
 * the body-less overload signatures of the same name before it (TypeScript, C++), blank lines or
 * not, with their own doc comments. A comment sharing a row with the statement before it
 * (`} // end`) stays with that statement.
 */
function attachLeading(items: Item[]): void {
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as Item;
    if (!item.decl) continue;
    for (let j = i - 1; j >= 0; j--) {
      const prev = items[j] as Item;
      if (prev.attached) break;
      const overload = isOverload(prev.decl, item.decl);
      const gap = item.start - prev.end - 1;
      if (!overload && (!prev.leading || prev.decl || gap > (prev.doc ? 1 : 0))) break;
      const before = items[j - 1];
      if (!overload && before && before.end >= prev.start) break;
      prev.attached = true;
      item.start = prev.start;
    }
  }
}

function isOverload(signature: Declaration | undefined, implementation: Declaration): boolean {
  if (!signature || signature.body || signature.members || signature.name === undefined) return false;
  return signature.name === implementation.name && signature.kind === implementation.kind;
}
