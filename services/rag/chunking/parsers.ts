/**
 * web-tree-sitter and its grammars, loaded once per process. Loading a grammar compiles a wasm
 * module (a few to tens of milliseconds, several MB for C++ and C#), so each is loaded on first
 * use and kept; one Parser per grammar is reused, which is safe because parsing is synchronous.
 */

import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Language, Parser } from 'web-tree-sitter';
import type { Grammar } from './languages.ts';

const require = createRequire(import.meta.url);
const WASM_DIR = join(dirname(require.resolve('@vscode/tree-sitter-wasm/package.json')), 'wasm');

let runtime: Promise<void> | undefined;
const parsers = new Map<Grammar, Promise<Parser>>();

export function grammarPath(grammar: Grammar): string {
  return join(WASM_DIR, `tree-sitter-${grammar}.wasm`);
}

export function parserFor(grammar: Grammar): Promise<Parser> {
  let parser = parsers.get(grammar);
  if (!parser) {
    parser = load(grammar);
    parsers.set(grammar, parser);
    // A failed load is not cached, so a later call can try again (the error still reaches this caller).
    parser.catch(() => parsers.delete(grammar));
  }
  return parser;
}

/** Loads grammars ahead of the first file, so that the first chunking call is not the slow one. */
export async function preloadGrammars(grammars: readonly Grammar[]): Promise<void> {
  await Promise.all(grammars.map(parserFor));
}

async function load(grammar: Grammar): Promise<Parser> {
  runtime ??= Parser.init().catch((error: unknown) => {
    runtime = undefined;
    throw error;
  });
  await runtime;
  const language = await Language.load(grammarPath(grammar));
  const parser = new Parser();
  parser.setLanguage(language);
  return parser;
}
