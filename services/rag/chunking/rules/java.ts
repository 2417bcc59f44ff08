/** Java: annotations sit inside `modifiers`, Javadoc is a preceding `block_comment`. */

import type { Node } from 'web-tree-sitter';
import { field, fieldText } from '../syntax-rules.ts';
import type { Declaration, SyntaxRules } from '../syntax-rules.ts';

const CONTAINERS: Readonly<Record<string, Declaration['kind']>> = {
  class_declaration: 'class',
  record_declaration: 'class',
  interface_declaration: 'interface',
  annotation_type_declaration: 'interface',
};
const METHODS = new Set(['method_declaration', 'constructor_declaration', 'compact_constructor_declaration']);

export const javaRules: SyntaxRules = {
  declaration,
  isLeading: (node) => node.type === 'block_comment' || node.type === 'line_comment',
};

function declaration(node: Node): Declaration | undefined {
  const name = fieldText(node, 'name');
  if (METHODS.has(node.type)) return { kind: 'function', name, node, body: field(node, 'body') };
  const kind = CONTAINERS[node.type];
  if (kind) {
    const body = field(node, 'body');
    return { kind, name, node, body, members: body };
  }
  if (node.type === 'enum_declaration') return { kind: 'enum', name, node };
  return undefined;
}
