/**
 * The calls the project itself makes of the component (in the files that use it), for integration
 * tests: each call with literal arguments is one the test can repeat exactly.
 */

import type { Node } from 'web-tree-sitter';
import { detectLanguage } from '../../../rag/chunking/languages.ts';
import { parserFor } from '../../../rag/chunking/parsers.ts';
import { callOf, literalArgs } from './literal-calls.ts';
import type { Value } from './values.ts';

export type Usage =
  | { path: string; line: number; text: string; args: Value[] }
  | { path: string; line: number; text: string; problem: string };

const SCRIPT_GRAMMARS = new Set(['javascript', 'typescript', 'tsx']);
const MAX_CALLS_PER_FILE = 20;

export async function usagesOf(files: ReadonlyArray<{ path: string; source: string }>, name: string, isClass: boolean): Promise<Usage[]> {
  const out: Usage[] = [];
  for (const file of files) {
    const language = detectLanguage(file.path, file.source);
    if (language.chunker !== 'code' || !SCRIPT_GRAMMARS.has(language.grammar)) continue;
    const parser = await parserFor(language.grammar);
    const tree = parser.parse(file.source);
    if (!tree) continue;
    try {
      const names = localNames(tree.rootNode, name);
      const calls: Node[] = [];
      const visit = (n: Node): void => {
        if (calls.length >= MAX_CALLS_PER_FILE) return;
        const call = callOf(n, names, isClass);
        if (call && call.id === n.id) calls.push(call);
        for (const child of n.namedChildren) if (child) visit(child);
      };
      visit(tree.rootNode);
      for (const call of calls) {
        const line = call.startPosition.row + 1;
        const text = call.text.replace(/\s+/g, ' ');
        const args = literalArgs(call);
        out.push(
          args.ok
            ? { path: file.path, line, text, args: args.args }
            : { path: file.path, line, text, problem: `its arguments are not literals (${args.reason})` },
        );
      }
    } finally {
      tree.delete();
    }
  }
  return out;
}

/** The component's name and any alias it is imported under (`import { x as y }`). */
function localNames(root: Node, name: string): Set<string> {
  const names = new Set([name]);
  const visit = (n: Node): void => {
    if (n.type === 'import_specifier' && n.childForFieldName('name')?.text === name) {
      const alias = n.childForFieldName('alias')?.text;
      if (alias) names.add(alias);
    }
    for (const child of n.namedChildren) if (child) visit(child);
  };
  visit(root);
  return names;
}
