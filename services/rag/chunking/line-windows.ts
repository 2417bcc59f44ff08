/**
 * Lines and windows of lines: the fallback chunker, and the splitter every other chunker uses for
 * a declaration or section that is larger than the size cap. Rows here are 0-based; the chunkers
 * turn them into 1-based lines at the very end.
 */

import type { Chunk, ChunkOptions } from './chunk.ts';

/** A run of rows with its text (the text differs from the rows only for pieces of a long line). */
export interface Span {
  start: number;
  end: number;
  content: string;
}

export interface WindowLimits {
  maxChars: number;
  maxLines: number;
  overlap: number;
  /** cut before a blank line near the end of a full window, so paragraphs and blocks stay whole */
  preferBlankBreaks: boolean;
}

/** `\r\n` and `\n` both end a line; a final newline does not open an extra, empty line. */
export function splitLines(content: string): string[] {
  const lines = content.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.endsWith('\r')) lines[i] = line.slice(0, -1);
  }
  return lines;
}

export function isBlank(line: string | undefined): boolean {
  return line === undefined || line.trim() === '';
}

export function textOf(lines: readonly string[], start: number, end: number): string {
  return lines.slice(start, end + 1).join('\n');
}

/** The same as `textOf(...).length`, without building the string. */
export function charsOf(lines: readonly string[], start: number, end: number): number {
  let n = 0;
  for (let r = start; r <= end; r++) n += (lines[r] as string).length + 1;
  return n - 1;
}

/** The rows without their leading and trailing blank lines, or undefined when all are blank. */
export function trimRows(lines: readonly string[], start: number, end: number): [number, number] | undefined {
  let s = start;
  let e = end;
  while (s <= e && isBlank(lines[s])) s++;
  while (e >= s && isBlank(lines[e])) e--;
  return s <= e ? [s, e] : undefined;
}

/**
 * Cuts rows [start, end] into windows of at most `maxChars` characters and `maxLines` lines, each
 * sharing `overlap` lines with the one before. A line longer than `maxChars` (minified code) becomes
 * several windows on that one row, so the cap holds for every window.
 */
export function windowRows(lines: readonly string[], start: number, end: number, limits: WindowLimits): Span[] {
  const { maxChars, maxLines, overlap, preferBlankBreaks } = limits;
  const spans: Span[] = [];
  let s = start;
  while (s <= end) {
    if (isBlank(lines[s])) {
      s++;
      continue;
    }
    const first = lines[s] as string;
    if (first.length > maxChars) {
      for (let i = 0; i < first.length; i += maxChars) spans.push({ start: s, end: s, content: first.slice(i, i + maxChars) });
      s++;
      continue;
    }
    let e = s;
    let size = first.length;
    while (e < end && e - s + 1 < maxLines && size + 1 + (lines[e + 1] as string).length <= maxChars) {
      e++;
      size += 1 + (lines[e] as string).length;
    }
    if (preferBlankBreaks && e < end) e = blankBreak(lines, s, e);
    const trimmed = trimRows(lines, s, e) ?? [s, s];
    spans.push({ start: trimmed[0], end: trimmed[1], content: textOf(lines, trimmed[0], trimmed[1]) });
    if (e >= end) break;
    s = nextStart(lines, s, e, overlap, maxChars);
  }
  return spans;
}

/** The last blank row in the final third of the window, as the window's end, when there is one. */
function blankBreak(lines: readonly string[], s: number, e: number): number {
  const floor = s + Math.ceil(((e - s) * 2) / 3);
  for (let r = e; r > floor; r--) if (isBlank(lines[r])) return r - 1;
  return e;
}

/**
 * Overlap only where the next window can still grow past this one; otherwise (a long line follows)
 * every overlapping start would end at the same row and repeat the same text.
 */
function nextStart(lines: readonly string[], s: number, e: number, overlap: number, maxChars: number): number {
  let next = Math.max(e + 1 - overlap, s + 1);
  while (next <= e && charsOf(lines, next, e + 1) > maxChars) next++;
  return next;
}

/** The plain-text fallback: fixed windows of lines over the whole file. */
export function textChunks(lines: readonly string[], language: string, options: ChunkOptions): Chunk[] {
  const limits = { maxChars: options.maxChars, maxLines: options.windowLines, overlap: options.windowOverlap, preferBlankBreaks: false };
  return windowRows(lines, 0, lines.length - 1, limits).map((span) => toChunk(span, { kind: 'text', language }));
}

/** Rows of one declaration or section, as one chunk, or as numbered windows when over the cap. */
export function rowChunks(lines: readonly string[], start: number, end: number, base: ChunkBase, options: ChunkOptions): Chunk[] {
  const rows = trimRows(lines, start, end);
  if (!rows) return [];
  if (charsOf(lines, rows[0], rows[1]) <= options.maxChars)
    return [toChunk({ start: rows[0], end: rows[1], content: textOf(lines, rows[0], rows[1]) }, base)];
  const limits = { maxChars: options.maxChars, maxLines: Infinity, overlap: options.splitOverlap, preferBlankBreaks: true };
  return numbered(windowRows(lines, rows[0], rows[1], limits), base);
}

/** Spans that are parts of one thing: each gets `part` when there is more than one. */
export function numbered(spans: readonly Span[], base: ChunkBase): Chunk[] {
  if (spans.length === 1) return [toChunk(spans[0] as Span, base)];
  return spans.map((span, i) => toChunk(span, { ...base, part: { index: i + 1, count: spans.length } }));
}

export type ChunkBase = Omit<Chunk, 'content' | 'startLine' | 'endLine'>;

export function toChunk(span: Span, base: ChunkBase): Chunk {
  const chunk: Chunk = {
    content: span.content,
    startLine: span.start + 1,
    endLine: span.end + 1,
    kind: base.kind,
    language: base.language,
  };
  if (base.symbol !== undefined) chunk.symbol = base.symbol;
  if (base.part) chunk.part = base.part;
  return chunk;
}
