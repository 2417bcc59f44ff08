/**
 * The entry point: a file's path and content -> retrieval chunks. Chooses the syntax-tree chunker
 * for languages with a grammar, the section chunker for Markdown, and line windows for the rest
 * and whenever parsing is not possible or not trusted. Same input and options, same chunks.
 */

import { resolveOptions } from './chunk.ts';
import type { Chunk, ChunkOptions } from './chunk.ts';
import { chunkSyntaxTree, untrustworthy } from './code-chunker.ts';
import { detectLanguage } from './languages.ts';
import type { LanguageInfo } from './languages.ts';
import { splitLines, textChunks } from './line-windows.ts';
import { chunkMarkdown } from './markdown-chunker.ts';
import { parserFor } from './parsers.ts';
import { RULES } from './rules/index.ts';

export type { Chunk, ChunkKind, ChunkOptions, ChunkPart } from './chunk.ts';
export { detectLanguage } from './languages.ts';
export { preloadGrammars } from './parsers.ts';

/** `path` is relative with `/` separators; it picks the language (and is not read). */
export async function chunkFile(path: string, content: string, options: Partial<ChunkOptions> = {}): Promise<Chunk[]> {
  const resolved = resolveOptions(options);
  const language = detectLanguage(path, content);
  const lines = splitLines(content);
  if (language.chunker === 'markdown') return chunkMarkdown(lines, language.id, resolved);
  if (language.chunker === 'code' && content.length <= resolved.maxParseChars) {
    const chunks = await chunkCode(language, content, lines, resolved);
    if (chunks) return chunks;
  }
  return textChunks(lines, language.id, resolved);
}

async function chunkCode(
  language: LanguageInfo & { chunker: 'code' },
  content: string,
  lines: string[],
  options: ChunkOptions,
): Promise<Chunk[] | undefined> {
  const parser = await parserFor(language.grammar);
  const tree = parser.parse(content);
  if (!tree) return undefined;
  // Trees live in wasm memory, which the JavaScript garbage collector does not reclaim.
  try {
    if (untrustworthy(tree.rootNode, lines.length, options)) return undefined;
    return chunkSyntaxTree(tree.rootNode, content, lines, RULES[language.grammar], language.id, options);
  } finally {
    tree.delete();
  }
}
