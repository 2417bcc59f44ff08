/** Go: methods are top-level and named `Receiver.Method`; a `type` block may declare several types. */

import type { Node } from 'web-tree-sitter';
import { field, fieldText, namedChildren } from '../syntax-rules.ts';
import type { Declaration, SyntaxRules } from '../syntax-rules.ts';

export const goRules: SyntaxRules = {
  declaration,
  isLeading: (node) => node.type === 'comment',
};

function declaration(node: Node): Declaration | undefined {
  switch (node.type) {
    case 'function_declaration':
      return { kind: 'function', name: fieldText(node, 'name'), node, body: field(node, 'body') };
    case 'method_declaration': {
      const receiver = field(node, 'receiver');
      const type = receiver?.descendantsOfType('type_identifier')[0]?.text;
      const name = fieldText(node, 'name');
      return { kind: 'method', name: type && name ? `${type}.${name}` : name, node, body: field(node, 'body') };
    }
    case 'type_declaration': {
      const specs = namedChildren(node).filter((c) => c.type === 'type_spec' || c.type === 'type_alias');
      const only = specs.length === 1 ? field(specs[0] as Node, 'type')?.type : undefined;
      const kind = only === 'interface_type' ? 'interface' : 'type';
      return { kind, name: names(specs), node };
    }
    case 'const_declaration':
    case 'var_declaration':
      return { kind: 'variable', name: names(specsOf(node)), node };
  }
  return undefined;
}

/** `var ( ... )` keeps its specs in a `var_spec_list`; `const ( ... )` does not. */
function specsOf(node: Node): Node[] {
  return namedChildren(node).flatMap((c) => (c.type === 'var_spec_list' ? namedChildren(c) : [c]));
}

function names(specs: readonly Node[]): string | undefined {
  const all = specs.map((s) => fieldText(s, 'name')).filter((n) => n !== undefined);
  return all.length ? all.join(', ') : undefined;
}
