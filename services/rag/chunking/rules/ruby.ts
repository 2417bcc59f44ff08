/** Ruby: classes and modules are containers; `class << self` is see-through. */

import type { Node } from 'web-tree-sitter';
import { field, fieldText } from '../syntax-rules.ts';
import type { Declaration, SyntaxRules } from '../syntax-rules.ts';

export const rubyRules: SyntaxRules = {
  declaration,
  transparent: (node) => (node.type === 'singleton_class' ? field(node, 'body') : undefined),
  isLeading: (node) => node.type === 'comment',
};

function declaration(node: Node): Declaration | undefined {
  switch (node.type) {
    case 'method':
    case 'singleton_method':
      return { kind: 'function', name: fieldText(node, 'name'), node, body: field(node, 'body') };
    case 'class':
    case 'module': {
      const body = field(node, 'body');
      return { kind: node.type === 'class' ? 'class' : 'module', name: fieldText(node, 'name'), node, body, members: body };
    }
  }
  return undefined;
}
