/** Rust: `impl` blocks are containers named after their type; traits are interfaces with methods. */

import type { Node } from 'web-tree-sitter';
import { field, fieldText } from '../syntax-rules.ts';
import type { Declaration, SyntaxRules } from '../syntax-rules.ts';

const COMMENTS = new Set(['line_comment', 'block_comment']);

export const rustRules: SyntaxRules = {
  declaration,
  // `//!` and `/*!` document the enclosing item, not the next one.
  isLeading: (node) => node.type === 'attribute_item' || (COMMENTS.has(node.type) && !field(node, 'inner')),
};

function declaration(node: Node): Declaration | undefined {
  const name = fieldText(node, 'name');
  switch (node.type) {
    case 'function_item':
    case 'function_signature_item':
      return { kind: 'function', name, node, body: field(node, 'body') };
    case 'struct_item':
    case 'union_item':
    case 'type_item':
      return { kind: 'type', name, node };
    case 'enum_item':
      return { kind: 'enum', name, node };
    case 'trait_item':
      return container('interface', name, node);
    case 'impl_item':
      return container('class', typeName(field(node, 'type')), node);
    case 'mod_item':
      return field(node, 'body') ? container('module', name, node) : undefined;
    case 'macro_definition':
      return { kind: 'function', name: name && `${name}!`, node };
    case 'const_item':
    case 'static_item':
      return { kind: 'variable', name, node };
  }
  return undefined;
}

function container(kind: Declaration['kind'], name: string | undefined, node: Node): Declaration {
  const body = field(node, 'body');
  return { kind, name, node, body, members: body };
}

/** `Foo<T>` and `crate::Foo` are both `Foo`. */
function typeName(type: Node | undefined): string | undefined {
  if (!type) return undefined;
  if (type.type === 'generic_type') return typeName(field(type, 'type'));
  if (type.type === 'scoped_type_identifier') return fieldText(type, 'name');
  return type.text;
}
