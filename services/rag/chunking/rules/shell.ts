/** Bash and PowerShell: functions (and PowerShell classes); everything else is module chunks. */

import type { Node } from 'web-tree-sitter';
import { childOfType, field, fieldText } from '../syntax-rules.ts';
import type { Declaration, SyntaxRules } from '../syntax-rules.ts';

export const bashRules: SyntaxRules = {
  declaration: (node) =>
    node.type === 'function_definition' ? { kind: 'function', name: fieldText(node, 'name'), node, body: field(node, 'body') } : undefined,
  // The shebang describes the file, not the first function.
  isLeading: (node) => node.type === 'comment' && !node.text.startsWith('#!'),
};

export const powershellRules: SyntaxRules = {
  declaration: powershellDeclaration,
  transparent: (node) => (node.type === 'statement_list' ? node : undefined),
  isLeading: (node) => node.type === 'comment',
};

function powershellDeclaration(node: Node): Declaration | undefined {
  switch (node.type) {
    case 'function_statement':
      return { kind: 'function', name: childOfType(node, ['function_name'])?.text, node, body: childOfType(node, ['script_block']) };
    case 'class_statement':
      return { kind: 'class', name: childOfType(node, ['simple_name'])?.text, node, members: node };
    case 'class_method_definition':
      return { kind: 'function', name: childOfType(node, ['simple_name'])?.text, node, body: childOfType(node, ['script_block']) };
  }
  return undefined;
}
