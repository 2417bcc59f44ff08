/**
 * The chunk that stands for a class too large to be one chunk: its header, its fields and other
 * plain members verbatim, and only the signatures of the members that get chunks of their own
 * (their doc comments and bodies are in those chunks).
 * It answers "what does this class have", while each method's chunk answers "how does it work".
 */

import type { Node } from 'web-tree-sitter';
import { isBlank } from './line-windows.ts';
import type { Declaration } from './syntax-rules.ts';
import type { Item } from './syntax-items.ts';

export interface OutlineInput {
  lines: readonly string[];
  source: string;
  /** rows of the whole class, leading comments included */
  start: number;
  end: number;
  members: readonly Item[];
  /** whether a member is chunked on its own (then only its signature is shown) */
  standalone: (item: Item) => Declaration | undefined;
}

export function outlineLines(input: OutlineInput): string[] {
  const { lines, start, end, members } = input;
  const out: string[] = [];
  // Every row not in a standalone member stays, so nothing of the class is lost between chunks.
  let row = start;
  for (const member of members) {
    const decl = member.attached ? undefined : input.standalone(member);
    if (!decl) continue;
    push(out, lines, row, member.start - 1);
    out.push(...signature(lines, input.source, decl));
    row = Math.max(row, member.end + 1);
  }
  push(out, lines, row, end);
  return out;
}

function push(out: string[], lines: readonly string[], from: number, to: number): void {
  for (let r = from; r <= to; r++) if (!isBlank(lines[r])) out.push(lines[r] as string);
}

/** The declaration up to its body: `async save(doc: Doc): Promise<void>`, `def run(self) -> int:` */
function signature(lines: readonly string[], source: string, decl: Declaration): string[] {
  const node: Node = decl.node;
  const before = (lines[node.startPosition.row] as string).slice(0, node.startPosition.column);
  const indent = isBlank(before) ? before : '';
  const end = decl.body ? decl.body.startIndex : node.endIndex;
  const text = source.slice(node.startIndex, end).trimEnd();
  return (indent + text).split('\n').map((l) => l.replace(/\r$/, ''));
}
