/**
 * A function's parameters as the generator sees them: names, defaults, declared types (TypeScript
 * first, then JSDoc), and destructured objects with their properties. Each value the generator
 * can choose is a leaf; an object parameter is built from its leaves.
 */

import type { Node } from 'web-tree-sitter';
import { toExpr } from './expr.ts';
import type { Expr } from './expr.ts';
import type { DocComment, DocParam } from './jsdoc.ts';
import { parseType, UNKNOWN } from './type-desc.ts';
import type { PropertyType, TypeDesc } from './type-desc.ts';

/** How the function body reaches a leaf: a local name, then property keys (`props.productId`). */
export interface Access {
  root: string;
  path: string[];
}

export interface LeafParam {
  kind: 'leaf';
  id: string;
  label: string;
  access?: Access;
  type: TypeDesc;
  /** a type was declared (TypeScript or JSDoc), so values of other types need a cast in TypeScript */
  declared: boolean;
  defaultExpr?: Expr;
  optional: boolean;
}

export interface ObjectParam {
  kind: 'object';
  id: string;
  label: string;
  /** the parameter's own name when it is not destructured */
  binding?: string;
  destructured: boolean;
  properties: Array<{ key: string; param: Param }>;
  type: TypeDesc;
  declared: boolean;
  defaultExpr?: Expr;
  optional: boolean;
}

/** Array patterns and rest parameters: their names are bound, but to nothing the generator chooses. */
export interface OpaqueParam {
  kind: 'opaque';
  id: string;
  label: string;
  names: string[];
  arrayPattern: boolean;
  type: TypeDesc;
  declared: boolean;
  defaultExpr?: Expr;
  optional: boolean;
}

export type Param = LeafParam | ObjectParam | OpaqueParam;

export interface Signature {
  params: Param[];
  returns?: TypeDesc;
  isAsync: boolean;
  isGenerator: boolean;
}

/** `fn` is a function/arrow/method node (it has `parameters` and `body`). */
export function signatureOf(fn: Node, doc: DocComment): Signature {
  const list = fn.childForFieldName('parameters');
  const single = fn.childForFieldName('parameter');
  const nodes = list ? list.namedChildren.filter((c): c is Node => c !== null && c.type !== 'comment') : single ? [single] : [];
  const params: Param[] = [];
  const identifiers = nodes
    .map((n) => patternOf(n))
    .filter((p): p is Node => p?.type === 'identifier')
    .map((p) => p.text);
  nodes.forEach((node) => {
    const pattern = patternOf(node);
    if (!pattern || pattern.type === 'this') return;
    const docParam = docFor(doc, pattern, params.length, identifiers);
    params.push(paramOf(node, pattern, `p${params.length}`, docParam));
  });
  const returnNode = fn.childForFieldName('return_type');
  const returns = returnNode ? parseType(typeText(returnNode)) : doc.returns;
  const isAsync = fn.children.some((c) => c?.type === 'async');
  const isGenerator = fn.type.includes('generator') || fn.children.some((c) => c?.type === '*');
  return returns ? { params, returns, isAsync, isGenerator } : { params, isAsync, isGenerator };
}

function patternOf(node: Node): Node | undefined {
  if (node.type === 'required_parameter' || node.type === 'optional_parameter') return node.childForFieldName('pattern') ?? undefined;
  if (node.type === 'assignment_pattern') return node.childForFieldName('left') ?? undefined;
  return node;
}

/** By name, else (a destructured parameter has none) the JSDoc @param in the same position. */
function docFor(doc: DocComment, pattern: Node, index: number, identifiers: string[]): DocParam | undefined {
  if (pattern.type === 'identifier') return doc.params.find((p) => p.name === pattern.text);
  const positional = doc.params[index];
  return positional && !identifiers.includes(positional.name) ? positional : undefined;
}

function paramOf(node: Node, pattern: Node, id: string, doc: DocParam | undefined): Param {
  const typeNode = node.childForFieldName('type');
  const valueNode = node.type === 'assignment_pattern' ? node.childForFieldName('right') : node.childForFieldName('value');
  const declaredType = typeNode ? parseType(typeText(typeNode)) : doc?.type;
  const optional = node.type === 'optional_parameter' || Boolean(doc?.optional);
  return fromPattern(pattern, id, {
    type: declaredType,
    defaultExpr: valueNode ? toExpr(valueNode) : undefined,
    optional,
  });
}

interface Extras {
  type: TypeDesc | undefined;
  defaultExpr: Expr | undefined;
  optional: boolean;
}

function fromPattern(pattern: Node, id: string, extras: Extras, access?: Access): Param {
  const base = {
    id,
    type: extras.type ?? UNKNOWN,
    declared: extras.type !== undefined,
    optional: extras.optional || extras.defaultExpr !== undefined,
    ...(extras.defaultExpr ? { defaultExpr: extras.defaultExpr } : {}),
  };
  if (pattern.type === 'identifier' || pattern.type === 'shorthand_property_identifier_pattern') {
    const name = pattern.text;
    if (extras.type?.kind === 'record' && extras.type.properties.length > 0) {
      // A typed options object: its properties are what the body reads (`options.max`).
      const properties = extras.type.properties.map((p) => ({
        key: p.name,
        param: leafFor(p, `${id}.${p.name}`, { root: name, path: [p.name] }),
      }));
      return { kind: 'object', label: name, binding: name, destructured: false, properties, ...base };
    }
    return { kind: 'leaf', label: name, access: access ?? { root: name, path: [] }, ...base };
  }
  if (pattern.type === 'object_pattern') return objectPattern(pattern, id, extras, base);
  const names = [...identifiersIn(pattern)];
  return { kind: 'opaque', label: pattern.text, names, arrayPattern: pattern.type === 'array_pattern', ...base };
}

function leafFor(property: PropertyType, id: string, access: Access): Param {
  if (property.type.kind === 'record' && property.type.properties.length > 0) {
    const properties = property.type.properties.map((p) => ({
      key: p.name,
      param: leafFor(p, `${id}.${p.name}`, { root: access.root, path: [...access.path, p.name] }),
    }));
    return {
      kind: 'object',
      id,
      label: property.name,
      destructured: false,
      properties,
      type: property.type,
      declared: true,
      optional: property.optional,
    };
  }
  return { kind: 'leaf', id, label: property.name, access, type: property.type, declared: true, optional: property.optional };
}

function objectPattern(
  pattern: Node,
  id: string,
  extras: Extras,
  base: Omit<ObjectParam, 'kind' | 'label' | 'destructured' | 'properties'>,
): Param {
  const declared = extras.type?.kind === 'record' ? extras.type.properties : [];
  const typeOf = (key: string): PropertyType | undefined => declared.find((p) => p.name === key);
  const properties: ObjectParam['properties'] = [];
  const rest: string[] = [];
  for (const member of pattern.namedChildren) {
    if (!member || member.type === 'comment') continue;
    const key = keyOf(member);
    if (member.type === 'rest_pattern' || key === undefined) {
      rest.push(...identifiersIn(member));
      continue;
    }
    const propertyType = typeOf(key);
    const childId = `${id}.${key}`;
    const child: Extras = {
      type: propertyType?.type,
      defaultExpr: defaultOf(member),
      optional: propertyType?.optional ?? false,
    };
    const target = targetOf(member);
    properties.push({
      key,
      param: target
        ? fromPattern(target, childId, child)
        : { kind: 'opaque', id: childId, label: key, names: [], arrayPattern: false, type: UNKNOWN, declared: false, optional: true },
    });
  }
  if (rest.length > 0)
    properties.push({
      key: '...',
      param: {
        kind: 'opaque',
        id: `${id}...`,
        label: '...rest',
        names: rest,
        arrayPattern: false,
        type: UNKNOWN,
        declared: false,
        optional: true,
      },
    });
  return { kind: 'object', label: pattern.text, destructured: true, properties, ...base };
}

/** The property key a member of an object pattern reads. */
function keyOf(member: Node): string | undefined {
  if (member.type === 'shorthand_property_identifier_pattern') return member.text;
  if (member.type === 'object_assignment_pattern') {
    const left = member.childForFieldName('left');
    return left?.type === 'shorthand_property_identifier_pattern' ? left.text : undefined;
  }
  if (member.type === 'pair_pattern') {
    const key = member.childForFieldName('key');
    if (key?.type === 'property_identifier') return key.text;
    if (key?.type === 'string') return key.text.slice(1, -1);
  }
  return undefined;
}

/** The pattern that receives the property's value (a name, or a nested pattern). */
function targetOf(member: Node): Node | undefined {
  if (member.type === 'shorthand_property_identifier_pattern') return member;
  if (member.type === 'object_assignment_pattern') return member.childForFieldName('left') ?? undefined;
  const value = member.childForFieldName('value');
  if (value?.type === 'assignment_pattern') return value.childForFieldName('left') ?? undefined;
  return value ?? undefined;
}

function defaultOf(member: Node): Expr | undefined {
  if (member.type === 'object_assignment_pattern') {
    const right = member.childForFieldName('right');
    return right ? toExpr(right) : undefined;
  }
  const value = member.childForFieldName('value');
  if (value?.type === 'assignment_pattern') {
    const right = value.childForFieldName('right');
    return right ? toExpr(right) : undefined;
  }
  return undefined;
}

function identifiersIn(node: Node): Set<string> {
  const out = new Set<string>();
  const visit = (n: Node): void => {
    if (n.type === 'identifier' || n.type === 'shorthand_property_identifier_pattern') out.add(n.text);
    for (const child of n.namedChildren) if (child && child.type !== 'property_identifier') visit(child);
  };
  visit(node);
  return out;
}

function typeText(annotation: Node): string {
  return annotation.text.replace(/^\s*:/, '').trim();
}

/** Every name a parameter list binds. */
export function boundNames(params: readonly Param[]): string[] {
  const out: string[] = [];
  const visit = (p: Param): void => {
    if (p.kind === 'leaf') {
      if (p.access && p.access.path.length === 0) out.push(p.access.root);
    } else if (p.kind === 'object') {
      if (p.binding) out.push(p.binding);
      for (const prop of p.properties) visit(prop.param);
    } else out.push(...p.names);
  };
  for (const p of params) visit(p);
  return out;
}

/** The leaves in order: what the solver assigns. */
export function leavesOf(params: readonly Param[]): LeafParam[] {
  const out: LeafParam[] = [];
  const visit = (p: Param): void => {
    if (p.kind === 'leaf') out.push(p);
    else if (p.kind === 'object') for (const prop of p.properties) visit(prop.param);
  };
  for (const p of params) visit(p);
  return out;
}
