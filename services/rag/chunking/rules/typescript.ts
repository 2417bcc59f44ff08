/** TypeScript, TSX and JavaScript (the three grammars share these node types). */

import type { Node } from 'web-tree-sitter';
import { field, fieldText, namedChildren, wrapped } from '../syntax-rules.ts';
import type { Declaration, SyntaxRules } from '../syntax-rules.ts';

const FUNCTIONS = new Set(['function_declaration', 'generator_function_declaration', 'function_signature']);
const FUNCTION_VALUES = new Set(['arrow_function', 'function_expression', 'function', 'generator_function']);
const CLASSES = new Set(['class_declaration', 'abstract_class_declaration', 'class']);
const METHODS = new Set(['method_definition', 'method_signature', 'abstract_method_signature']);
const FIELDS = new Set(['public_field_definition', 'field_definition']);

export const typescriptRules: SyntaxRules = {
  declaration,
  isLeading: (node) => node.type === 'comment' || node.type === 'decorator',
};

function declaration(node: Node): Declaration | undefined {
  const type = node.type;
  if (FUNCTIONS.has(type) || METHODS.has(type)) return { kind: 'function', name: fieldText(node, 'name'), node, body: field(node, 'body') };
  if (CLASSES.has(type)) return classLike(node, fieldText(node, 'name'));
  switch (type) {
    case 'interface_declaration':
      return { kind: 'interface', name: fieldText(node, 'name'), node };
    case 'type_alias_declaration':
      return { kind: 'type', name: fieldText(node, 'name'), node };
    case 'enum_declaration':
      return { kind: 'enum', name: fieldText(node, 'name'), node };
    case 'internal_module':
    case 'module': {
      const body = field(node, 'body');
      const name = fieldText(node, 'name')?.replace(/^['"]|['"]$/g, '');
      return { kind: 'module', name, node, body, members: body };
    }
    case 'export_statement':
      return wrapped(exported(node), node);
    case 'ambient_declaration': {
      const inner = namedChildren(node)[0];
      return inner && wrapped(declaration(inner), node);
    }
    case 'expression_statement': {
      const inner = namedChildren(node)[0];
      if (inner?.type === 'internal_module') return wrapped(declaration(inner), node);
      if (inner?.type === 'call_expression') return wrapped(called(inner), node);
      return inner?.type === 'assignment_expression' ? wrapped(assigned(inner), node) : undefined;
    }
    case 'lexical_declaration':
    case 'variable_declaration':
      return variable(node);
  }
  if (FIELDS.has(type)) {
    const value = field(node, 'value');
    const name = fieldText(node, 'name') ?? fieldText(node, 'property');
    if (value && FUNCTION_VALUES.has(value.type)) return { kind: 'function', name, node, body: field(value, 'body') };
  }
  return undefined;
}

function classLike(node: Node, name: string | undefined): Declaration {
  const body = field(node, 'body');
  return { kind: 'class', name, node, body, members: body };
}

/** `export default <expression>` has a value instead of a declaration. */
function exported(node: Node): Declaration | undefined {
  const inner = field(node, 'declaration');
  if (inner) return declaration(inner);
  const value = field(node, 'value');
  if (!value) return undefined;
  const name = fieldText(value, 'name') ?? 'default';
  if (FUNCTION_VALUES.has(value.type)) return { kind: 'function', name, node: value, body: field(value, 'body') };
  if (CLASSES.has(value.type)) return classLike(value, name);
  return undefined;
}

/** `const foo = () => {}`, `const Foo = class {}`, `export const handler = wrap(async (req) => {...})` */
function variable(node: Node): Declaration | undefined {
  const declarators = namedChildren(node).filter((c) => c.type === 'variable_declarator');
  const first = declarators[0];
  if (!first) return undefined;
  const name = declarators.length === 1 ? fieldText(first, 'name') : declarators.map((d) => fieldText(d, 'name')).join(', ');
  const value = declarators.length === 1 ? field(first, 'value') : undefined;
  if (value && FUNCTION_VALUES.has(value.type)) return { kind: 'function', name, node, body: field(value, 'body') };
  if (value && CLASSES.has(value.type)) return { ...classLike(value, name), node };
  const wrappedFunction = value?.type === 'call_expression' ? functionArgument(value) : undefined;
  if (wrappedFunction && value && value.startPosition.row !== value.endPosition.row)
    return { kind: 'function', name, node, body: field(wrappedFunction, 'body') };
  return { kind: 'variable', name, node };
}

function functionArgument(call: Node): Node | undefined {
  const args = field(call, 'arguments');
  return args ? namedChildren(args).find((a) => FUNCTION_VALUES.has(a.type)) : undefined;
}

/** CommonJS: `exports.foo = function () {}`, `Foo.prototype.bar = function () {}` */
function assigned(node: Node): Declaration | undefined {
  const left = field(node, 'left');
  const right = field(node, 'right');
  if (!left || !right || !/^[\w$.]+$/.test(left.text)) return undefined;
  const prototype = left.text.includes('.prototype.');
  const name = left.text.replace('.prototype.', '.');
  if (FUNCTION_VALUES.has(right.type)) return { kind: prototype ? 'method' : 'function', name, node, body: field(right, 'body') };
  if (CLASSES.has(right.type)) return classLike(right, name);
  return undefined;
}

/**
 * A multi-line call given a function: `describe('users', () => {...})`, `app.get('/users/:id', ...)`,
 * named after the callee and its first string argument. Test suites and route tables are found
 * by those names.
 */
function called(call: Node): Declaration | undefined {
  const callee = field(call, 'function')?.text;
  const fn = functionArgument(call);
  if (!callee || !fn || !/^[\w$.]+$/.test(callee) || call.startPosition.row === call.endPosition.row) return undefined;
  const args = field(call, 'arguments');
  const label = args && namedChildren(args).find((a) => a.type === 'string' || a.type === 'template_string');
  const name = label ? `${callee} ${label.text.slice(1, -1)}` : callee;
  return { kind: 'function', name, node: call, body: field(fn, 'body') };
}
