/**
 * What the code chunker needs to know about one grammar: which nodes are declarations (and their
 * names), which are containers of members, which are see-through wrappers, and which leading
 * nodes (doc comments, decorators, attributes) belong to the declaration after them.
 */

import type { Node } from 'web-tree-sitter';
import type { ChunkKind } from './chunk.ts';

export interface Declaration {
  /** `function` inside a class-like container is reported as `method` */
  kind: ChunkKind;
  name?: string;
  /** the whole extent, wrappers included (export, decorators, template<...>) */
  node: Node;
  /** where the signature ends: the function body, or the container body */
  body?: Node;
  /** a container: the node whose named children are its members, named `Container.member` */
  members?: Node;
}

export interface SyntaxRules {
  declaration(node: Node): Declaration | undefined;
  /** a wrapper whose members sit at the wrapper's own level (namespaces, `#ifdef`, `extern "C"`) */
  transparent?(node: Node): Node | undefined;
  /** comments, decorators and attributes that belong to the declaration right after them */
  isLeading(node: Node): boolean;
}

export function field(node: Node, name: string): Node | undefined {
  return node.childForFieldName(name) ?? undefined;
}

export function fieldText(node: Node, name: string): string | undefined {
  return node.childForFieldName(name)?.text;
}

export function namedChildren(node: Node): Node[] {
  const out: Node[] = [];
  for (const child of node.namedChildren) if (child) out.push(child);
  return out;
}

export function childOfType(node: Node, types: readonly string[]): Node | undefined {
  for (const child of node.namedChildren) if (child && types.includes(child.type)) return child;
  return undefined;
}

/** Rows of a node; a node that ends right after a newline ends on the row before. */
export function rowsOf(node: Node): [number, number] {
  const start = node.startPosition.row;
  const end = node.endPosition;
  return [start, end.column === 0 && end.row > start ? end.row - 1 : end.row];
}

/** Same declaration, extent widened to a wrapper (export statement, decorators, template). */
export function wrapped(inner: Declaration | undefined, wrapper: Node): Declaration | undefined {
  return inner && { ...inner, node: wrapper };
}
