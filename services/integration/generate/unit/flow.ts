/**
 * A function body as the steps the simulator walks: `if`s with their blocks, `throw`s, `return`s,
 * declarations, and everything else as code it does not evaluate (with the names it assigns or
 * mentions, and where it touches the DOM). Loops, switches and try blocks are such code: the
 * branches inside them are listed as not covered.
 */

import type { Node } from 'web-tree-sitter';
import { isDomGlobal } from './dom-globals.ts';
import { oneLine, toExpr } from './expr.ts';
import type { Expr } from './expr.ts';

export interface ThrownError {
  /** the constructor in `throw new X(...)` */
  ctor?: string;
  /** the message when it is a literal */
  message?: string;
}

/** A `throw new X(...)` step: the message may be an expression the simulator evaluates. */
export interface ThrowSite {
  ctor: string;
  message?: Expr;
}

/** first and last line of a block */
export type LineRange = [number, number];

export interface Ternary {
  id: number;
  test: Expr;
  text: string;
  line: number;
}

interface Facts {
  line: number;
  /** names assigned (`x = `, `x.y = `, `x++`) */
  assigned: Set<string>;
  /** every name read or written, nested functions included */
  mentions: Set<string>;
  /** the first line that reads a browser-only global */
  domLine?: number;
  ternaries: Ternary[];
  /** the names calls start from (`save` in `save(x)`, `db` in `db.insert(x)`, `Client` in `new Client()`) */
  calls: Set<string>;
}

export type Step =
  | {
      kind: 'if';
      id: number;
      line: number;
      test: Expr;
      text: string;
      domLine?: number;
      calls: Set<string>;
      then: Step[];
      thenLines: LineRange;
      else?: Step[];
      elseLines?: LineRange;
    }
  | { kind: 'throw'; line: number; site?: ThrowSite; facts: Facts }
  | { kind: 'return'; line: number; value?: Expr; facts: Facts }
  | { kind: 'let'; line: number; name?: string; names: string[]; value?: Expr; facts: Facts }
  | ({ kind: 'code'; text: string; mayExit: boolean } & Facts);

export interface IfStep {
  step: Extract<Step, { kind: 'if' }>;
  /** how many `if` blocks enclose it */
  depth: number;
}

export interface Flow {
  steps: Step[];
  ifs: IfStep[];
  ternaries: Ternary[];
  /** branches the simulator does not follow */
  uncovered: Array<{ line: number; reason: string }>;
}

const NESTED_FUNCTIONS = new Set([
  'function_declaration',
  'function_expression',
  'arrow_function',
  'generator_function_declaration',
  'generator_function',
  'method_definition',
  'class_declaration',
  'class',
]);
const SKIPPED_STATEMENTS = new Set([
  'comment',
  'empty_statement',
  'function_declaration',
  'generator_function_declaration',
  'class_declaration',
  'type_alias_declaration',
  'interface_declaration',
]);
const LOOPS: Readonly<Record<string, string>> = {
  for_statement: 'a loop',
  for_in_statement: 'a loop',
  while_statement: 'a loop',
  do_statement: 'a loop',
  switch_statement: 'a switch',
  try_statement: 'a try block',
  labeled_statement: 'a labeled statement',
};

interface Builder {
  nextId: number;
  ifs: IfStep[];
  ternaries: Ternary[];
  uncovered: Flow['uncovered'];
  /** names declared anywhere in the module: they shadow browser globals */
  declared: ReadonlySet<string>;
}

/** `body` is a statement block or, for an arrow function, its expression. */
export function flowOf(body: Node, declared: ReadonlySet<string>): Flow {
  const b: Builder = { nextId: 0, ifs: [], ternaries: [], uncovered: [], declared };
  const steps =
    body.type === 'statement_block'
      ? block(body, b, 0)
      : [{ kind: 'return' as const, line: lineOf(body), value: toExpr(body), facts: factsOf(body, b) }];
  const byLine = (a: { line: number }, c: { line: number }): number => a.line - c.line;
  return { steps, ifs: b.ifs.sort((a, c) => byLine(a.step, c.step)), ternaries: b.ternaries.sort(byLine), uncovered: b.uncovered };
}

function block(node: Node, b: Builder, depth: number): Step[] {
  if (node.type !== 'statement_block') return statement(node, b, depth);
  const out: Step[] = [];
  for (const child of node.namedChildren) if (child) out.push(...statement(child, b, depth));
  return out;
}

function statement(node: Node, b: Builder, depth: number): Step[] {
  if (SKIPPED_STATEMENTS.has(node.type)) return [];
  const line = lineOf(node);
  switch (node.type) {
    case 'statement_block':
      return block(node, b, depth);
    case 'if_statement': {
      const condition = node.childForFieldName('condition');
      const consequence = node.childForFieldName('consequence');
      if (!condition || !consequence) return [code(node, b)];
      const id = b.nextId++;
      const conditionFacts = factsOf(condition, b, false);
      const step: Extract<Step, { kind: 'if' }> = {
        kind: 'if',
        id,
        line,
        test: toExpr(condition),
        text: oneLine(condition.text.replace(/^\(|\)$/g, ''), 60),
        calls: conditionFacts.calls,
        then: block(consequence, b, depth + 1),
        thenLines: linesOf(consequence),
      };
      if (conditionFacts.domLine !== undefined) step.domLine = conditionFacts.domLine;
      const alternative = node.childForFieldName('alternative');
      const elseBody = alternative?.namedChildren.find((c): c is Node => c !== null && c.type !== 'comment');
      if (alternative && elseBody) {
        step.else = block(elseBody, b, depth + 1);
        step.elseLines = linesOf(alternative);
      }
      b.ifs.push({ step, depth });
      return [step];
    }
    case 'throw_statement': {
      const value = node.namedChildren.find((c): c is Node => c !== null && c.type !== 'comment');
      const step: Step = { kind: 'throw', line, facts: factsOf(node, b) };
      const site = value ? throwSite(value) : undefined;
      if (site) step.site = site;
      return [step];
    }
    case 'return_statement': {
      const value = node.namedChildren.find((c): c is Node => c !== null && c.type !== 'comment');
      return [
        value ? { kind: 'return', line, value: toExpr(value), facts: factsOf(node, b) } : { kind: 'return', line, facts: factsOf(node, b) },
      ];
    }
    case 'lexical_declaration':
    case 'variable_declaration': {
      const out: Step[] = [];
      for (const declarator of node.namedChildren) {
        if (declarator?.type !== 'variable_declarator') continue;
        const name = declarator.childForFieldName('name');
        const value = declarator.childForFieldName('value');
        const facts = factsOf(declarator, b);
        const names = name ? [...identifiers(name)] : [];
        const step: Extract<Step, { kind: 'let' }> = { kind: 'let', line: lineOf(declarator), names, facts };
        if (name?.type === 'identifier') step.name = name.text;
        step.value = value ? toExpr(value) : { kind: 'name', name: 'undefined' };
        out.push(step);
      }
      return out;
    }
    default:
      return [code(node, b)];
  }
}

function code(node: Node, b: Builder): Step {
  const facts = factsOf(node, b);
  noteUncovered(node, b, LOOPS[node.type]);
  return { kind: 'code', text: oneLine(node.text, 60), mayExit: containsExit(node), ...facts };
}

/** Branches inside code the simulator does not follow, for the report. */
function noteUncovered(node: Node, b: Builder, inside: string | undefined): void {
  if (!inside) return;
  const visit = (n: Node): void => {
    if (NESTED_FUNCTIONS.has(n.type)) return;
    if (n.type === 'if_statement' || n.type === 'ternary_expression' || n.type === 'switch_case') {
      b.uncovered.push({
        line: lineOf(n),
        reason: `the branch at line ${lineOf(n)} is inside ${inside}, which the generator does not follow`,
      });
    }
    for (const child of n.namedChildren) if (child) visit(child);
  };
  for (const child of node.namedChildren) if (child) visit(child);
}

function containsExit(node: Node): boolean {
  if (node.type === 'return_statement' || node.type === 'throw_statement') return true;
  if (NESTED_FUNCTIONS.has(node.type)) return false;
  return node.namedChildren.some((c) => c !== null && containsExit(c));
}

function factsOf(node: Node, b: Builder, collectTernaries = true): Facts {
  const facts: Facts = { line: lineOf(node), assigned: new Set(), mentions: new Set(), ternaries: [], calls: new Set() };
  const visit = (n: Node, inFunction: boolean, inTernaryBranch: boolean): void => {
    if (n.type === 'identifier' || n.type === 'shorthand_property_identifier') {
      facts.mentions.add(n.text);
      if (facts.domLine === undefined && isDomGlobal(n.text) && !b.declared.has(n.text)) facts.domLine = lineOf(n);
    }
    if (n.type === 'assignment_expression' || n.type === 'augmented_assignment_expression') {
      const root = rootName(n.childForFieldName('left'));
      if (root) facts.assigned.add(root);
    }
    if (n.type === 'update_expression') {
      const root = rootName(n.childForFieldName('argument'));
      if (root) facts.assigned.add(root);
    }
    if (n.type === 'call_expression' || n.type === 'new_expression') {
      const root = rootName(n.childForFieldName(n.type === 'call_expression' ? 'function' : 'constructor'));
      if (root) facts.calls.add(root);
    }
    const nestedFunction = inFunction || NESTED_FUNCTIONS.has(n.type);
    if (collectTernaries && n.type === 'ternary_expression' && !nestedFunction && !inTernaryBranch) {
      const condition = n.childForFieldName('condition');
      if (condition) {
        const ternary = { id: b.nextId++, test: toExpr(condition), text: oneLine(condition.text, 60), line: lineOf(n) };
        facts.ternaries.push(ternary);
        b.ternaries.push(ternary);
      }
    }
    for (let i = 0; i < n.childCount; i++) {
      const child = n.child(i);
      if (!child?.isNamed) continue;
      const branch = n.type === 'ternary_expression' && n.fieldNameForChild(i) !== 'condition';
      visit(child, nestedFunction, inTernaryBranch || branch);
    }
  };
  visit(node, false, false);
  return facts;
}

function rootName(node: Node | null): string | undefined {
  let n: Node | null = node;
  while (
    n &&
    (n.type === 'member_expression' ||
      n.type === 'subscript_expression' ||
      n.type === 'parenthesized_expression' ||
      n.type === 'non_null_expression')
  ) {
    n =
      n.type === 'parenthesized_expression' || n.type === 'non_null_expression'
        ? (n.namedChildren[0] ?? null)
        : n.childForFieldName('object');
  }
  return n?.type === 'identifier' ? n.text : undefined;
}

function identifiers(node: Node): Set<string> {
  const out = new Set<string>();
  const visit = (n: Node): void => {
    if (n.type === 'identifier' || n.type === 'shorthand_property_identifier_pattern') out.add(n.text);
    for (const child of n.namedChildren) if (child) visit(child);
  };
  visit(node);
  return out;
}

function throwSite(value: Node): ThrowSite | undefined {
  if (value.type !== 'new_expression' && value.type !== 'call_expression') return undefined;
  const ctor = value.childForFieldName(value.type === 'new_expression' ? 'constructor' : 'function');
  if (ctor?.type !== 'identifier') return undefined;
  // `Error(msg)` without `new` makes the same error.
  if (value.type === 'call_expression' && !/Error$/.test(ctor.text)) return undefined;
  const args = value.childForFieldName('arguments');
  const first = args?.namedChildren.find((c): c is Node => c !== null && c.type !== 'comment');
  return first ? { ctor: ctor.text, message: toExpr(first) } : { ctor: ctor.text };
}

export function lineOf(node: Node): number {
  return node.startPosition.row + 1;
}

function linesOf(node: Node): LineRange {
  return [lineOf(node), node.endPosition.row + 1];
}
