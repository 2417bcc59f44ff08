/**
 * Markdown by section: a chunk starts at a heading (ATX `## x` or setext `x\n---`) and runs to the
 * next heading; its symbol is the heading path (`Install > Linux`). Headings inside fenced code
 * are not headings. A heading with nothing under it before a deeper heading joins that subsection,
 * so a lone `# Install` line is not a chunk of its own.
 */

import type { Chunk, ChunkOptions } from './chunk.ts';
import { isBlank, rowChunks } from './line-windows.ts';
import type { ChunkBase } from './line-windows.ts';

interface Heading {
  row: number;
  /** the underline row of a setext heading, else `row` */
  lastRow: number;
  level: number;
  title: string;
}

interface Section {
  start: number;
  end: number;
  symbol?: string;
}

const ATX = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const SETEXT = /^ {0,3}(=+|-+)[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
/** a line that cannot be the text of a setext heading (a list item, quote, table, code) */
const NOT_SETEXT_TEXT = /^(?: {4}|\t| {0,3}(?:[-*+>|]|\d+[.)])(?:\s|$)| {0,3}#)/;

export function chunkMarkdown(lines: readonly string[], language: string, options: ChunkOptions): Chunk[] {
  const chunks: Chunk[] = [];
  for (const section of sections(lines, headings(lines))) {
    const base: ChunkBase = { kind: 'section', language };
    if (section.symbol) base.symbol = section.symbol;
    chunks.push(...rowChunks(lines, section.start, section.end, base, options));
  }
  return chunks;
}

export function headings(lines: readonly string[]): Heading[] {
  const found: Heading[] = [];
  let fence: string | undefined;
  let codeEnd = -1;
  let row = frontMatterEnd(lines);
  for (; row < lines.length; row++) {
    const line = lines[row] as string;
    const marker = FENCE.exec(line)?.[1];
    if (fence !== undefined) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = undefined;
      codeEnd = row;
      continue;
    }
    if (marker) {
      fence = marker;
      codeEnd = row;
      continue;
    }
    const atx = ATX.exec(line);
    if (atx) {
      found.push({ row, lastRow: row, level: (atx[1] as string).length, title: (atx[2] ?? '').trim() });
      continue;
    }
    const underline = SETEXT.exec(line)?.[1];
    const text = lines[row - 1];
    const previous = found[found.length - 1];
    if (
      underline &&
      text !== undefined &&
      !isBlank(text) &&
      !NOT_SETEXT_TEXT.test(text) &&
      previous?.lastRow !== row - 1 &&
      codeEnd !== row - 1
    )
      found.push({ row: row - 1, lastRow: row, level: underline[0] === '=' ? 1 : 2, title: text.trim() });
  }
  return found;
}

/** YAML (`---`) or TOML (`+++`) front matter is not a setext underline nor a thematic break. */
function frontMatterEnd(lines: readonly string[]): number {
  const open = lines[0]?.trim();
  if (open !== '---' && open !== '+++') return 0;
  for (let r = 1; r < lines.length; r++) if (lines[r]?.trim() === open) return r + 1;
  return 0;
}

function sections(lines: readonly string[], found: readonly Heading[]): Section[] {
  const out: Section[] = [];
  const first = found[0];
  if (!first || first.row > 0) out.push({ start: 0, end: first ? first.row - 1 : lines.length - 1 });
  const path: Heading[] = [];
  let pendingStart: number | undefined;
  for (let i = 0; i < found.length; i++) {
    const h = found[i] as Heading;
    const next = found[i + 1];
    const end = next ? next.row - 1 : lines.length - 1;
    while (path.length && (path[path.length - 1] as Heading).level >= h.level) path.pop();
    path.push(h);
    const start = pendingStart ?? h.row;
    if (next && next.level > h.level && onlyBlank(lines, h.lastRow + 1, end)) {
      pendingStart = start;
      continue;
    }
    pendingStart = undefined;
    out.push({ start, end, symbol: path.map((p) => p.title).join(' > ') });
  }
  return out;
}

function onlyBlank(lines: readonly string[], from: number, to: number): boolean {
  for (let r = from; r <= to; r++) if (!isBlank(lines[r])) return false;
  return true;
}
