/**
 * Source code -> chunks along its syntax tree: one chunk per declaration (with its doc comment),
 * large classes as an outline plus one chunk per method, oversized declarations as numbered
 * windows, and the statements between declarations packed into `module` chunks. A final pass
 * puts any line still uncovered (a stray token between members) into a module chunk, so every
 * non-blank line of the file is in some chunk.
 */

import type { Node } from 'web-tree-sitter';
import type { Chunk, ChunkKind, ChunkOptions } from './chunk.ts';
import { outlineLines } from './class-outline.ts';
import { charsOf, isBlank, numbered, rowChunks, windowRows } from './line-windows.ts';
import type { ChunkBase } from './line-windows.ts';
import { itemsOf } from './syntax-items.ts';
import type { Item } from './syntax-items.ts';
import { rowsOf } from './syntax-rules.ts';
import type { Declaration, SyntaxRules } from './syntax-rules.ts';

/** Members of these get `method` rather than `function`, and plain members go into the outline. */
const CLASS_LIKE: ReadonlySet<ChunkKind> = new Set(['class', 'interface', 'enum', 'type']);

type Scope = 'top' | 'class';

interface Context {
  lines: readonly string[];
  source: string;
  rules: SyntaxRules;
  language: string;
  options: ChunkOptions;
  chunks: Chunk[];
}

/** Whether the tree is too broken to chunk by (then the caller falls back to line windows). */
export function untrustworthy(root: Node, lineCount: number, options: ChunkOptions): boolean {
  if (root.type === 'ERROR') return true;
  if (!root.hasError) return false;
  let errorRows = 0;
  for (const child of root.namedChildren) {
    if (child?.type !== 'ERROR') continue;
    const [start, end] = rowsOf(child);
    errorRows += end - start + 1;
  }
  return errorRows > options.maxErrorShare * lineCount;
}

export function chunkSyntaxTree(
  root: Node,
  source: string,
  lines: readonly string[],
  rules: SyntaxRules,
  language: string,
  options: ChunkOptions,
): Chunk[] {
  const ctx: Context = { lines, source, rules, language, options, chunks: [] };
  emitLevel(ctx, itemsOf(root, rules), undefined);
  fillGaps(ctx);
  return ctx.chunks.sort((a, b) => a.startLine - b.startLine || b.endLine - a.endLine);
}

function emitLevel(ctx: Context, items: readonly Item[], prefix: string | undefined): void {
  let run: Item[] = [];
  // The rest of a declaration's last line (`} // end`, a macro the grammar could not place) is
  // already in that declaration's chunk.
  let coveredTo = -1;
  for (const item of items) {
    if (item.attached) continue;
    const decl = standalone(ctx, item, 'top');
    if (!decl) {
      if (item.end > coveredTo) run.push(item.start > coveredTo ? item : { ...item, start: coveredTo + 1 });
      continue;
    }
    emitModule(ctx, run);
    run = [];
    emitDeclaration(ctx, decl, item, 'top', prefix);
    coveredTo = Math.max(coveredTo, item.end);
  }
  emitModule(ctx, run);
}

/**
 * In a class, plain fields and body-less signatures read best in the outline; at the top level,
 * a constant stands alone only when it is large enough to be searched for by itself.
 */
function standalone(ctx: Context, item: Item, scope: Scope): Declaration | undefined {
  const { decl } = item;
  if (!decl) return undefined;
  if (decl.kind === 'variable') {
    const [start, end] = rowsOf(decl.node);
    return scope === 'top' && end - start + 1 >= ctx.options.minVariableLines ? decl : undefined;
  }
  if (scope === 'class' && !decl.body && !decl.members) return undefined;
  return decl;
}

function emitDeclaration(ctx: Context, decl: Declaration, item: Item, scope: Scope, prefix: string | undefined): void {
  const kind: ChunkKind = decl.kind === 'function' && scope === 'class' ? 'method' : decl.kind;
  const symbol = qualified(prefix, decl.name);
  const base: ChunkBase = { kind, language: ctx.language };
  if (symbol !== undefined) base.symbol = symbol;
  const { lines, options } = ctx;
  if (decl.members && charsOf(lines, item.start, item.end) > options.maxChars) {
    emitContainer(ctx, decl.members, item, base, CLASS_LIKE.has(kind) ? 'class' : 'top', symbol);
    return;
  }
  ctx.chunks.push(...rowChunks(lines, item.start, item.end, base, options));
}

function emitContainer(ctx: Context, members: Node, item: Item, base: ChunkBase, scope: Scope, prefix: string | undefined): void {
  const memberItems = itemsOf(members, ctx.rules);
  const outline = outlineLines({
    lines: ctx.lines,
    source: ctx.source,
    start: item.start,
    end: item.end,
    members: memberItems,
    standalone: (m) => standalone(ctx, m, scope),
  });
  // Outline windows keep the class's own line range: their lines are not contiguous in the file.
  const limits = { maxChars: ctx.options.maxChars, maxLines: Infinity, overlap: ctx.options.splitOverlap, preferBlankBreaks: false };
  const spans = windowRows(outline, 0, outline.length - 1, limits).map((s) => ({ ...s, start: item.start, end: item.end }));
  ctx.chunks.push(...numbered(spans, base));
  for (const member of memberItems) {
    const decl = member.attached ? undefined : standalone(ctx, member, scope);
    if (decl) emitDeclaration(ctx, decl, member, scope, prefix);
  }
}

/** Consecutive plain statements, packed up to the size cap without cutting a statement. */
function emitModule(ctx: Context, run: readonly Item[]): void {
  const { lines, options } = ctx;
  const base: ChunkBase = { kind: 'module', language: ctx.language };
  let start = -1;
  let end = -1;
  for (const item of run) {
    if (start >= 0 && charsOf(lines, start, Math.max(end, item.end)) <= options.maxChars) {
      end = Math.max(end, item.end);
      continue;
    }
    if (start >= 0) ctx.chunks.push(...rowChunks(lines, start, end, base, options));
    start = item.start;
    end = item.end;
  }
  if (start >= 0) ctx.chunks.push(...rowChunks(lines, start, end, base, options));
}

function fillGaps(ctx: Context): void {
  const { lines } = ctx;
  const covered = new Uint8Array(lines.length);
  for (const c of ctx.chunks) covered.fill(1, c.startLine - 1, c.endLine);
  let start = -1;
  for (let r = 0; r <= lines.length; r++) {
    const open = r < lines.length && !covered[r];
    if (open && start < 0 && !isBlank(lines[r])) start = r;
    if (!open && start >= 0) {
      ctx.chunks.push(...rowChunks(lines, start, r - 1, { kind: 'module', language: ctx.language }, ctx.options));
      start = -1;
    }
  }
}

function qualified(prefix: string | undefined, name: string | undefined): string | undefined {
  if (name === undefined) return prefix;
  return prefix === undefined ? name : `${prefix}.${name}`;
}
