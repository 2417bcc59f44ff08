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

export const DEFAULT_RECIPE: EmbeddingRecipe = PATH_SYMBOL_RECIPE;

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
