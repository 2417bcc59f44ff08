/**
 * JSDoc `@example` lines of the form `fn(args) // => value`: the author's own statement of what a
 * call returns, turned into values a test asserts with deep equality.
 */

import type { Grammar } from '../../../rag/chunking/languages.ts';
import { parserFor } from '../../../rag/chunking/parsers.ts';
import { callOf, literalArgs, literalValue } from './literal-calls.ts';
import type { Value } from './values.ts';

export type Example = { line: number; text: string; args: Value[]; expected: Value } | { line: number; text: string; problem: string };

const ARROW = /^(.*?)\/\/\s*(?:=>|→|returns\b|->)\s*(.+)$/;

export async function examplesOf(
  lines: ReadonlyArray<{ text: string; line: number }>,
  name: string,
  isClass: boolean,
  grammar: Grammar,
): Promise<Example[]> {
  const out: Example[] = [];
  const parser = await parserFor(grammar);
  const names = new Set([name]);
  for (const { text, line } of lines) {
    // Prose and other code in an example block are not cases.
    if (!text.includes(`${name}(`)) continue;
    const arrow = ARROW.exec(text);
    if (!arrow) {
      out.push({ line, text, problem: 'it has no `// => value` to assert' });
      continue;
    }
    const [, callText = '', expectedText = ''] = arrow;
    const tree = parser.parse(`${callText.trim().replace(/;$/, '')};\n(${expectedText.trim().replace(/;$/, '')});`);
    const statements = tree?.rootNode.namedChildren.filter((c) => c?.type === 'expression_statement') ?? [];
    const callNode = statements[0]?.namedChildren[0];
    const expectedNode = statements[1]?.namedChildren[0];
    const call = callNode ? callOf(callNode, names, isClass) : undefined;
    if (!tree || tree.rootNode.hasError || !call || !expectedNode || statements.length !== 2) {
      tree?.delete();
      out.push({ line, text, problem: `it is not a call of ${name} followed by \`// => value\`` });
      continue;
    }
    const args = literalArgs(call);
    const expected = literalValue(expectedNode);
    tree.delete();
    if (!args.ok) out.push({ line, text, problem: `its arguments are not literals (${args.reason})` });
    else if (!expected.ok) out.push({ line, text, problem: `its value is not a literal (${expected.reason})` });
    else out.push({ line, text, args: args.args, expected: expected.value });
  }
  return out;
}
