/** PHP: attributes sit inside declarations; text outside `<?php ?>` is left to module chunks. */

import type { Node } from 'web-tree-sitter';
import { field, fieldText } from '../syntax-rules.ts';
import type { Declaration, SyntaxRules } from '../syntax-rules.ts';

const CONTAINERS: Readonly<Record<string, Declaration['kind']>> = {
  class_declaration: 'class',
  trait_declaration: 'class',
  interface_declaration: 'interface',
};

export const phpRules: SyntaxRules = {
  declaration,
  transparent: (node) => (node.type === 'namespace_definition' ? field(node, 'body') : undefined),
  isLeading: (node) => node.type === 'comment',
};

function declaration(node: Node): Declaration | undefined {
  const name = fieldText(node, 'name');
  if (node.type === 'function_definition' || node.type === 'method_declaration')
    return { kind: 'function', name, node, body: field(node, 'body') };
  const kind = CONTAINERS[node.type];
  if (kind) {
    const body = field(node, 'body');
    return { kind, name, node, body, members: body };
  }
  if (node.type === 'enum_declaration') return { kind: 'enum', name, node };
  return undefined;
}
