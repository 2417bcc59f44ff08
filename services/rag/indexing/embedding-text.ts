/**
 * The text a chunk is embedded as. The model sees 256 tokens at most and knows nothing of where a
 * chunk comes from, so the text starts with what a person would read first: the file path and the
 * chunk's name, with identifiers split into words (`retryBackoff` -> `retry backoff`), which a
 * WordPiece vocabulary tokenizes into real words instead of fragments. Chosen on bench/rag.ts
 * (see README.md for the figures of each recipe).
 *
 * A recipe's id goes into the store's model identity (`embeddingIdentity`): vectors made from
 * another recipe are not comparable, so a changed recipe makes the caller rebuild.
 */

import type { Chunk } from '../chunking/chunk.ts';
import { splitIdentifier } from '../chunking/identifiers.ts';

export interface EmbeddingRecipe {
  readonly id: string;
  text(path: string, chunk: Chunk): string;
  /**
   * More texts for a chunk longer than the model reads: their vectors and `text`'s are averaged
   * into the chunk's one vector. None when absent or empty.
   */
  windows?(path: string, chunk: Chunk): string[];
}

/** The chunk's text alone. */
export const RAW_RECIPE: EmbeddingRecipe = {
  id: 'raw-v1',
  text: (_path, chunk) => chunk.content,
};

/** Path and symbol as words, then the text. */
export const PATH_SYMBOL_RECIPE: EmbeddingRecipe = {
  id: 'path-symbol-v1',
  text: (path, chunk) => `${header(path, chunk)}\n${chunk.content}`,
};

/**
 * Path and symbol as words, then the text; a chunk longer than the model reads is embedded as the
 * mean of that and of the rest of it in windows of about as much, each under the same header. The
 * model reads 256 tokens, about 900 characters of code, and sees nothing of the rest of a longer
 * chunk; half of the chunks that answer the evaluation sets' questions are longer (a fifth of all
 * chunks). Measured on the development sets (bench/rag-eval/README.md); it embeds about 40 % more
 * texts, each no longer than the first.
 */
export const WINDOWED_RECIPE: EmbeddingRecipe = {
  id: 'path-symbol-windows-v1',
  text: PATH_SYMBOL_RECIPE.text,
  windows: (path, chunk) => laterWindows(chunk.content).map((window) => `${header(path, chunk)}\n${window}`),
};

export const DEFAULT_RECIPE: EmbeddingRecipe = WINDOWED_RECIPE;

/** About what the model reads of code (256 WordPiece tokens), in characters. */
export const WINDOW_CHARS = 900;
/** A chunk no longer than this is embedded once: its tail past the first window is a few lines. */
const WINDOWED_FROM_CHARS = WINDOW_CHARS + 150;
/** Lines each window repeats from the one before, so a statement cut at a border is seen whole once. */
const WINDOW_OVERLAP_LINES = 2;

/** A shorter window (a closing brace and the overlap) would only pull the mean towards noise. */
const MIN_WINDOW_CHARS = 40;

/**
 * The windows of `content` after the first `WINDOW_CHARS` characters (which the chunk's own text
 * covers), cut at line ends, each at most `WINDOW_CHARS` long unless one line is longer; windows of
 * `MIN_WINDOW_CHARS` or fewer characters are left out.
 */
export function laterWindows(content: string): string[] {
  if (content.length <= WINDOWED_FROM_CHARS) return [];
  const lines = content.split('\n');
  const size = (line: string) => line.length + 1;
  let next = 0;
  for (let used = 0; next < lines.length && used + size(lines[next] as string) <= WINDOW_CHARS; next++) used += size(lines[next] as string);
  const windows: string[] = [];
  let previousStart = 0;
  while (next < lines.length) {
    // Never back to where the previous window started: after a line longer than a window that would repeat it.
    const start = Math.max(previousStart + 1, next - WINDOW_OVERLAP_LINES);
    // A first line longer than a window (minified code, a one-line JSON file) is the chunk's own text:
    // with no line after it there is nothing left to window.
    if (start >= lines.length) break;
    previousStart = start;
    let end = start + 1;
    for (let used = size(lines[start] as string); end < lines.length && used + size(lines[end] as string) <= WINDOW_CHARS; end++)
      used += size(lines[end] as string);
    // Always past `next`, so a run of lines longer than a window cannot stall the loop.
    end = Math.max(end, next + 1);
    const window = lines.slice(start, end).join('\n');
    if (window.trim().length > MIN_WINDOW_CHARS) windows.push(window);
    next = end;
  }
  return windows;
}

/** `src/cmap/connection_pool.ts` + `ConnectionPool.checkOut` -> `src cmap connection pool ts | connection pool check out (method)` */
function header(path: string, chunk: Chunk): string {
  return `${words(path).join(' ')} | ${words(chunk.symbol ?? '').join(' ')} (${chunk.kind})`;
}

function words(text: string): string[] {
  return text.split(/[^\p{L}\p{N}_$-]+/u).flatMap(splitIdentifier);
}

/** The store's model identity for vectors made by `modelName` through `recipe`. */
export function embeddingIdentity(
  modelName: string,
  dimensions: number,
  recipe: EmbeddingRecipe = DEFAULT_RECIPE,
): { name: string; dimensions: number } {
  return { name: `${modelName}+${recipe.id}`, dimensions };
}
