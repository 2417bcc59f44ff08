/**
 * C and C++ (one grammar). Namespaces, `extern "C"` blocks and preprocessor conditionals are
 * see-through, so a header wrapped in an include guard still yields one chunk per declaration.
 */

import type { Node } from 'web-tree-sitter';
import { field, fieldText, wrapped } from '../syntax-rules.ts';
import type { Declaration, SyntaxRules } from '../syntax-rules.ts';

const CONDITIONALS = new Set(['preproc_if', 'preproc_ifdef', 'preproc_else', 'preproc_elif', 'preproc_elifdef']);
// `typedef long ssize_t;` names a `primitive_type`: the grammar knows the common C typedefs.
const NAMES = new Set([
  'identifier',
  'field_identifier',
  'qualified_identifier',
  'destructor_name',
  'operator_name',
  'type_identifier',
  'primitive_type',
]);

export const cppRules: SyntaxRules = {
  declaration,
  transparent(node) {
    if (CONDITIONALS.has(node.type)) return node;
    if (node.type === 'namespace_definition' || node.type === 'linkage_specification') return field(node, 'body');
    return undefined;
  },
  isLeading: (node) => node.type === 'comment',
};

function declaration(node: Node): Declaration | undefined {
  switch (node.type) {
    case 'function_definition': {
      const name = declaratorName(field(node, 'declarator'));
      const qualified = name?.includes('::');
      return { kind: qualified ? 'method' : 'function', name: name?.replaceAll('::', '.'), node, body: field(node, 'body') };
    }
    case 'declaration': {
      // A prototype (`int f(void);`), documented in headers like a definition is.
      const declarator = field(node, 'declarator');
      if (!declarator?.descendantsOfType('function_declarator').length) return undefined;
      return { kind: 'function', name: declaratorName(declarator)?.replaceAll('::', '.'), node };
    }
    case 'template_declaration': {
      const inner = node.namedChildren.find((c) => c !== null && c.type !== 'template_parameter_list');
      return inner ? wrapped(declaration(inner), node) : undefined;
    }
    case 'class_specifier':
    case 'struct_specifier':
    case 'union_specifier': {
      const body = field(node, 'body');
      if (!body) return undefined;
      return { kind: node.type === 'class_specifier' ? 'class' : 'type', name: fieldText(node, 'name'), node, body, members: body };
    }
    case 'enum_specifier':
      return field(node, 'body') ? { kind: 'enum', name: fieldText(node, 'name'), node } : undefined;
    case 'type_definition':
      return { kind: 'type', name: declaratorName(field(node, 'declarator')), node };
    case 'alias_declaration':
      return { kind: 'type', name: fieldText(node, 'name'), node };
  }
  return undefined;
}

/** The name inside `*f(int)`, `A::f(int) const`, `(*handler)(int)`, `~A()`. */
function declaratorName(declarator: Node | undefined): string | undefined {
  let node = declarator;
  for (let depth = 0; node && depth < 8; depth++) {
    if (NAMES.has(node.type)) return node.text;
    node = field(node, 'declarator') ?? node.namedChildren.find((c) => c !== null && NAMES.has(c.type)) ?? undefined;
  }
  return undefined;
}
