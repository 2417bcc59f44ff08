/** Python: decorators live inside `decorated_definition` and docstrings inside the body, so both come along. */

import type { Node } from 'web-tree-sitter';
import { field, fieldText, namedChildren, wrapped } from '../syntax-rules.ts';
import type { Declaration, SyntaxRules } from '../syntax-rules.ts';

export const pythonRules: SyntaxRules = {
  declaration,
  isLeading: (node) => node.type === 'comment',
};

function declaration(node: Node): Declaration | undefined {
  switch (node.type) {
    case 'function_definition':
      return { kind: 'function', name: fieldText(node, 'name'), node, body: field(node, 'body') };
    case 'class_definition': {
      const body = field(node, 'body');
      return { kind: 'class', name: fieldText(node, 'name'), node, body, members: body };
    }
    case 'decorated_definition': {
      const definition = field(node, 'definition');
      return definition && wrapped(declaration(definition), node);
    }
    case 'type_alias_statement':
      return { kind: 'type', name: fieldText(node, 'left'), node };
    case 'expression_statement': {
      const assignment = namedChildren(node)[0];
      const left = assignment?.type === 'assignment' ? field(assignment, 'left') : undefined;
      return left?.type === 'identifier' ? { kind: 'variable', name: left.text, node } : undefined;
    }
  }
  return undefined;
}
