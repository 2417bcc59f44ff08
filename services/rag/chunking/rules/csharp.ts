/** C#: attributes sit inside declarations, `///` docs are preceding comments, namespaces are see-through. */

import type { Node } from 'web-tree-sitter';
import { field, fieldText } from '../syntax-rules.ts';
import type { Declaration, SyntaxRules } from '../syntax-rules.ts';

const CONTAINERS: Readonly<Record<string, Declaration['kind']>> = {
  class_declaration: 'class',
  struct_declaration: 'class',
  record_declaration: 'class',
  record_struct_declaration: 'class',
  interface_declaration: 'interface',
};
const METHODS = new Set([
  'method_declaration',
  'constructor_declaration',
  'destructor_declaration',
  'operator_declaration',
  'conversion_operator_declaration',
  'local_function_statement',
]);
const PROPERTIES = new Set(['property_declaration', 'indexer_declaration', 'event_declaration']);

export const csharpRules: SyntaxRules = {
  declaration,
  transparent: (node) => (node.type === 'namespace_declaration' ? field(node, 'body') : undefined),
  isLeading: (node) => node.type === 'comment',
};

function declaration(node: Node): Declaration | undefined {
  const operator = fieldText(node, 'operator');
  const name = fieldText(node, 'name') ?? (operator && `operator ${operator}`);
  if (METHODS.has(node.type)) return { kind: 'function', name, node, body: field(node, 'body') };
  // `{ get; set; }` on one line is a field in all but name; accessors with bodies are code.
  if (PROPERTIES.has(node.type) && node.startPosition.row !== node.endPosition.row)
    return { kind: 'function', name: name ?? 'this', node, body: field(node, 'accessors') ?? field(node, 'value') };
  const kind = CONTAINERS[node.type];
  if (kind) {
    const body = field(node, 'body');
    return { kind, name, node, body, members: body };
  }
  if (node.type === 'enum_declaration') return { kind: 'enum', name, node };
  if (node.type === 'delegate_declaration') return { kind: 'type', name, node };
  return undefined;
}
