/**
 * The exported function or class a test is generated for, found in the module's syntax tree
 * (ESM `export` forms and CommonJS `module.exports` / `exports.x`), with what else the module
 * exports, the names it declares, and whether importing it already needs a browser.
 */

import type { Node } from 'web-tree-sitter';
import { isDomGlobal } from './dom-globals.ts';
import { evaluate } from './evaluate.ts';
import type { Env } from './evaluate.ts';
import { stringValue, toExpr } from './expr.ts';
import { GenerateError } from './generate-error.ts';
import { parseDocComment, NO_DOC } from './jsdoc.ts';
import type { DocComment } from './jsdoc.ts';

export type ExportKind = 'named' | 'default' | 'module';

export interface Component {
  name: string;
  kind: 'function' | 'class';
  exportKind: ExportKind;
  /** the function or arrow, or the class's constructor (absent when the class has none) */
  fn?: Node;
  /** the class node, for a class */
  classNode?: Node;
  doc: DocComment;
  /** the declaration's first line */
  line: number;
  /** a class's methods besides the constructor */
  methods: string[];
  /** the class extends another (its constructor runs code the generator does not see) */
  extendsClass: boolean;
  /** the class it extends, when named (`Error`, `Base`) */
  baseClass?: string;
}

export interface ModuleFacts {
  component: Component;
  /** classes the module exports by name (a test may import them: error and result classes) */
  exportedClasses: Set<string>;
  /** every name the module declares: they shadow browser globals */
  declared: Set<string>;
  /** a line that reads a browser global when the module is imported */
  importDomLine?: number;
  /** top-level `const NAME = <primitive>`: values conditions may compare with */
  constants: Env;
  /** names bound by `import` or `require`, with the module they come from */
  imports: Map<string, string>;
}

interface Export {
  exported: string;
  kind: ExportKind;
  /** the local declaration's name, when the export refers to one */
  local?: string;
  /** the exported value itself, when it is written in place */
  value?: Node;
  statement: Node;
}

const FUNCTIONS = new Set(['function_declaration', 'function_expression', 'function', 'arrow_function']);
const GENERATORS = new Set(['generator_function_declaration', 'generator_function']);
const CLASSES = new Set(['class_declaration', 'class', 'abstract_class_declaration']);
const DECLARATIONS = new Set([...FUNCTIONS, ...GENERATORS, ...CLASSES]);

export function findComponent(root: Node, name: string, modulePath: string): ModuleFacts {
  const locals = new Map<string, { node: Node; statement: Node }>();
  const exports: Export[] = [];
  const reexports = new Map<string, string>();
  for (const statement of root.namedChildren) {
    if (!statement) continue;
    const source = statement.type === 'export_statement' ? statement.childForFieldName('source') : null;
    if (source) reexportsOf(statement, source.text, reexports);
    else collect(statement, statement, locals, exports);
  }
  const exportedClasses = new Set<string>();
  for (const e of exports) {
    if (e.kind !== 'named') continue;
    const node = resolve(e.value ?? (e.local !== undefined ? locals.get(e.local)?.node : undefined), locals);
    if (node && CLASSES.has(node.type)) exportedClasses.add(e.exported);
  }
  const match =
    exports.find((e) => e.exported === name) ??
    exports.find((e) => e.kind !== 'named' && (e.local === name || (e.value && declaredName(e.value) === name)));
  if (!match) {
    const from = reexports.get(name) ?? reexports.get('*');
    if (from)
      throw new GenerateError(
        'NOT_SUPPORTED',
        `${modulePath} ${reexports.has(name) ? `re-exports ${name} from` : `does not define ${name}; it re-exports everything from`} ${from}: generate the test for the module that defines it`,
      );
    const local = locals.get(name);
    if (local)
      throw new GenerateError(
        'COMPONENT_NOT_FOUND',
        `${name} is declared in ${modulePath} (line ${local.node.startPosition.row + 1}) but not exported, so a test cannot import it`,
      );
    throw new GenerateError('COMPONENT_NOT_FOUND', `${modulePath} does not export ${name}`);
  }
  const found = resolve(match.value ?? (match.local !== undefined ? locals.get(match.local)?.node : undefined), locals);
  const statement = match.value
    ? match.statement
    : ((match.local !== undefined ? locals.get(match.local)?.statement : undefined) ?? match.statement);
  if (!found)
    throw new GenerateError(
      'NOT_SUPPORTED',
      `${name} is exported from ${modulePath} but defined elsewhere (re-exported); generate the test for the module that defines it`,
    );
  const declared = declaredNames(root);
  const facts: ModuleFacts = {
    component: componentOf(found, name, match.kind, docOf(statement)),
    exportedClasses,
    declared,
    constants: constantsOf(root),
    imports: importsOf(root),
  };
  const domLine = importDomLine(root, declared);
  if (domLine !== undefined) facts.importDomLine = domLine;
  return facts;
}

/** `import a, { b as c } from 'x'`, `import * as d from 'x'`, `const e = require('x')`, `const { f } = require('x')` */
function importsOf(root: Node): Map<string, string> {
  const out = new Map<string, string>();
  for (const statement of root.namedChildren) {
    if (!statement) continue;
    if (statement.type === 'import_statement') {
      const source = statement.childForFieldName('source');
      const from = source ? stringValue(source) : undefined;
      const clause = statement.namedChildren.find((c) => c?.type === 'import_clause' || c?.type === 'import_require_clause');
      if (!from || !clause) continue;
      const visit = (n: Node): void => {
        if (n.type === 'identifier') out.set(n.text, from);
        else if (n.type === 'import_specifier') {
          const local = n.childForFieldName('alias') ?? n.childForFieldName('name');
          if (local) out.set(local.text, from);
          return;
        }
        for (const child of n.namedChildren) if (child) visit(child);
      };
      visit(clause);
      continue;
    }
    if (statement.type !== 'lexical_declaration' && statement.type !== 'variable_declaration') continue;
    for (const declarator of statement.namedChildren) {
      const value = declarator?.childForFieldName('value');
      const name = declarator?.childForFieldName('name');
      if (!value || !name || value.type !== 'call_expression' || value.childForFieldName('function')?.text !== 'require') continue;
      const arg = value.childForFieldName('arguments')?.namedChildren[0];
      const from = arg?.type === 'string' ? stringValue(arg) : undefined;
      if (!from) continue;
      const names = name.type === 'identifier' ? [name] : name.descendantsOfType(['shorthand_property_identifier_pattern', 'identifier']);
      for (const n of names) if (n) out.set(n.text, from);
    }
  }
  return out;
}

/**
 * Only primitives: an object constant can be changed by any code that holds it, so its contents
 * are not known at call time.
 */
function constantsOf(root: Node): Env {
  const constants: Env = new Map();
  for (const statement of root.namedChildren) {
    const declaration = statement?.type === 'export_statement' ? statement.childForFieldName('declaration') : statement;
    if (declaration?.type !== 'lexical_declaration' || declaration.childForFieldName('kind')?.text !== 'const') continue;
    for (const declarator of declaration.namedChildren) {
      if (declarator?.type !== 'variable_declarator') continue;
      const name = declarator.childForFieldName('name');
      const value = declarator.childForFieldName('value');
      if (name?.type !== 'identifier' || !value) continue;
      try {
        const v = evaluate(toExpr(value), constants);
        if (typeof v !== 'object' || v === null) constants.set(name.text, { known: true, value: v });
      } catch {
        // not a constant the evaluator can compute
      }
    }
  }
  return constants;
}

/** `export { a as b } from './x.js'` and `export * from './x.js'` ('*'). */
function reexportsOf(statement: Node, source: string, out: Map<string, string>): void {
  const clause = statement.namedChildren.find((c) => c?.type === 'export_clause');
  if (!clause) {
    out.set('*', source);
    return;
  }
  for (const spec of clause.namedChildren) {
    if (spec?.type !== 'export_specifier') continue;
    const exported = spec.childForFieldName('alias')?.text ?? spec.childForFieldName('name')?.text;
    if (exported) out.set(exported, source);
  }
}

function collect(node: Node, statement: Node, locals: Map<string, { node: Node; statement: Node }>, exports: Export[]): void {
  if (node.type === 'export_statement') {
    const isDefault = node.children.some((c) => c?.type === 'default');
    const declaration = node.childForFieldName('declaration');
    const value = node.childForFieldName('value');
    if (declaration) {
      const names = declare(declaration, statement, locals);
      for (const n of names)
        exports.push({ exported: isDefault ? 'default' : n, kind: isDefault ? 'default' : 'named', local: n, statement });
      if (isDefault && names.length === 0) exports.push({ exported: 'default', kind: 'default', value: declaration, statement });
      return;
    }
    if (value) {
      if (value.type === 'identifier') exports.push({ exported: 'default', kind: 'default', local: value.text, statement });
      else exports.push({ exported: 'default', kind: 'default', value, statement });
      return;
    }
    for (const clause of node.namedChildren) {
      if (clause?.type !== 'export_clause') continue;
      for (const spec of clause.namedChildren) {
        if (spec?.type !== 'export_specifier') continue;
        const local = spec.childForFieldName('name')?.text;
        const alias = spec.childForFieldName('alias')?.text ?? local;
        if (!local || !alias) continue;
        exports.push({ exported: alias, kind: alias === 'default' ? 'default' : 'named', local, statement });
      }
    }
    return;
  }
  if (node.type === 'expression_statement') {
    const assignment = node.namedChildren[0];
    if (assignment?.type === 'assignment_expression') commonJs(assignment, statement, exports);
    return;
  }
  declare(node, statement, locals);
}

/** Records top-level declarations; returns the names declared. */
function declare(node: Node, statement: Node, locals: Map<string, { node: Node; statement: Node }>): string[] {
  if (DECLARATIONS.has(node.type)) {
    const name = node.childForFieldName('name')?.text;
    if (!name) return [];
    locals.set(name, { node, statement });
    return [name];
  }
  if (node.type === 'lexical_declaration' || node.type === 'variable_declaration') {
    const names: string[] = [];
    for (const declarator of node.namedChildren) {
      if (declarator?.type !== 'variable_declarator') continue;
      const name = declarator.childForFieldName('name');
      const value = declarator.childForFieldName('value');
      if (name?.type !== 'identifier') continue;
      locals.set(name.text, { node: value ?? declarator, statement });
      names.push(name.text);
    }
    return names;
  }
  return [];
}

function commonJs(assignment: Node, statement: Node, exports: Export[]): void {
  const left = assignment.childForFieldName('left');
  const right = assignment.childForFieldName('right');
  if (!left || !right || left.type !== 'member_expression') return;
  const object = left.childForFieldName('object');
  const property = left.childForFieldName('property')?.text;
  if (!object || !property) return;
  const isModuleExports = (n: Node): boolean =>
    n.type === 'member_expression' &&
    n.childForFieldName('object')?.text === 'module' &&
    n.childForFieldName('property')?.text === 'exports';
  if (object.text === 'module' && property === 'exports') {
    if (right.type === 'object') {
      for (const member of right.namedChildren) {
        if (member?.type === 'shorthand_property_identifier')
          exports.push({ exported: member.text, kind: 'named', local: member.text, statement });
        else if (member?.type === 'pair') {
          const key = member.childForFieldName('key')?.text;
          const value = member.childForFieldName('value');
          if (!key || !value) continue;
          exports.push(
            value.type === 'identifier'
              ? { exported: key, kind: 'named', local: value.text, statement }
              : { exported: key, kind: 'named', value, statement },
          );
        }
      }
      return;
    }
    const exported = right.type === 'identifier' ? right.text : (declaredName(right) ?? 'module.exports');
    exports.push(
      right.type === 'identifier'
        ? { exported, kind: 'module', local: right.text, statement }
        : { exported, kind: 'module', value: right, statement },
    );
    return;
  }
  if (object.text === 'exports' || isModuleExports(object)) {
    exports.push(
      right.type === 'identifier'
        ? { exported: property, kind: 'named', local: right.text, statement }
        : { exported: property, kind: 'named', value: right, statement },
    );
  }
}

/** Through `x as T`, `(x)`, `x satisfies T` and `export const a = b` to the function or class itself. */
function resolve(node: Node | undefined, locals: ReadonlyMap<string, { node: Node }>, depth = 0): Node | undefined {
  if (!node || depth > 8) return node;
  if (node.type === 'identifier') {
    const local = locals.get(node.text);
    return local ? resolve(local.node, locals, depth + 1) : node;
  }
  if (['parenthesized_expression', 'as_expression', 'satisfies_expression', 'non_null_expression'].includes(node.type)) {
    return resolve(node.namedChildren[0] ?? undefined, locals, depth + 1);
  }
  return node;
}

function declaredName(node: Node): string | undefined {
  return node.childForFieldName('name')?.text;
}

function componentOf(node: Node, name: string, exportKind: ExportKind, doc: DocComment): Component {
  const line = node.startPosition.row + 1;
  if (GENERATORS.has(node.type) || node.children.some((c) => c?.type === '*')) {
    throw new GenerateError(
      'NOT_SUPPORTED',
      `${name} is a generator function: its guards run only when the iterator is consumed, which the generator does not model`,
    );
  }
  if (FUNCTIONS.has(node.type)) return { name, kind: 'function', exportKind, fn: node, doc, line, methods: [], extendsClass: false };
  if (CLASSES.has(node.type)) {
    const body = node.childForFieldName('body');
    const methods: string[] = [];
    let ctor: Node | undefined;
    for (const member of body?.namedChildren ?? []) {
      if (member?.type !== 'method_definition') continue;
      const methodName = member.childForFieldName('name')?.text;
      if (methodName === 'constructor') ctor = member;
      else if (methodName) methods.push(methodName);
    }
    const heritage = node.namedChildren.find((c) => c?.type === 'class_heritage') ?? undefined;
    const base = heritage ? /\bextends\s+([A-Za-z_$][\w$.]*)/.exec(heritage.text)?.[1] : undefined;
    const component: Component = {
      name,
      kind: 'class',
      exportKind,
      classNode: node,
      doc,
      line,
      methods,
      extendsClass: heritage !== undefined && /\bextends\b/.test(heritage.text),
    };
    if (base) component.baseClass = base;
    if (ctor) component.fn = ctor;
    return component;
  }
  throw new GenerateError(
    'NOT_SUPPORTED',
    `${name} is ${article(node.type.replace(/_/g, ' '))}, not a function or a class: there is nothing to call`,
  );
}

function article(text: string): string {
  return /^[aeiou]/.test(text) ? `an ${text}` : `a ${text}`;
}

/** The `/** ... *\/` block right before the statement (one blank line allowed). */
function docOf(statement: Node): DocComment {
  const previous = statement.previousNamedSibling;
  if (previous?.type !== 'comment' || !previous.text.startsWith('/**')) return NO_DOC;
  if (statement.startPosition.row - previous.endPosition.row > 2) return NO_DOC;
  return parseDocComment(previous.text, previous.startPosition.row + 1);
}

/** Parent type -> the field that holds the declared name (undefined: any identifier child is one). */
const DECLARING_FIELDS: ReadonlyMap<string, string | undefined> = new Map([
  ['variable_declarator', 'name'],
  ['function_declaration', 'name'],
  ['generator_function_declaration', 'name'],
  ['class_declaration', 'name'],
  ['function_expression', 'name'],
  ['class', 'name'],
  ['required_parameter', 'pattern'],
  ['optional_parameter', 'pattern'],
  ['assignment_pattern', 'left'],
  ['pair_pattern', 'value'],
  ['catch_clause', 'parameter'],
  ['import_specifier', undefined],
  ['import_clause', undefined],
  ['namespace_import', undefined],
  ['formal_parameters', undefined],
  ['array_pattern', undefined],
  ['rest_pattern', undefined],
]);

function declaredNames(root: Node): Set<string> {
  const out = new Set<string>();
  const visit = (n: Node): void => {
    const parent = n.parent;
    if ((n.type === 'identifier' || n.type === 'type_identifier') && parent && DECLARING_FIELDS.has(parent.type)) {
      const field = DECLARING_FIELDS.get(parent.type);
      if (field === undefined || parent.childForFieldName(field)?.id === n.id) out.add(n.text);
    }
    if (n.type === 'shorthand_property_identifier_pattern') out.add(n.text);
    for (const child of n.namedChildren) if (child) visit(child);
  };
  visit(root);
  return out;
}

const DEFERRED = new Set([
  'function_declaration',
  'function_expression',
  'function',
  'arrow_function',
  'generator_function_declaration',
  'generator_function',
  'method_definition',
  'class_body',
]);

/** Code that runs on import (outside function bodies) and reads a browser global. */
function importDomLine(root: Node, declared: ReadonlySet<string>): number | undefined {
  let line: number | undefined;
  const visit = (n: Node): void => {
    if (line !== undefined || DEFERRED.has(n.type)) return;
    // `typeof window` is how code checks for a browser without touching one.
    if (n.type === 'unary_expression' && n.childForFieldName('operator')?.text === 'typeof') return;
    if (n.type === 'identifier' && isDomGlobal(n.text) && !declared.has(n.text)) {
      line = n.startPosition.row + 1;
      return;
    }
    for (const child of n.namedChildren) if (child) visit(child);
  };
  visit(root);
  return line;
}
