/**
 * What a component's definition says on its face: the errors it throws (with the guard before each)
 * and the parameters it takes. Read from the definition's text as the index holds it; pure.
 */

export interface ThrowSite {
  errorType: string;
  message: string | null;
  /** The `if (…)` guarding it, when the throw sits in one. */
  condition: string | null;
  /** 1-based, in the file. */
  line: number;
}

export interface CodeFacts {
  throws: ThrowSite[];
  parameters: string[];
}

// A backslash is read only as the start of an escape: were it also an ordinary character, an
// unterminated string of backslashes (customer text) would be split every way: each one more, 1.6 times the time.
const THROW = /throw\s+new\s+([A-Za-z_$][\w$]*)\s*\(\s*(?:(["'`])((?:\\.|(?!\2)[^\\\n])*)\2)?/g;

export function codeFacts(content: string, startLine: number): CodeFacts {
  const throws: ThrowSite[] = [];
  for (const match of content.matchAll(THROW)) {
    const at = match.index ?? 0;
    const line = startLine + (content.slice(0, at).match(/\n/g)?.length ?? 0);
    throws.push({ errorType: match[1] as string, message: match[3] ?? null, condition: guardBefore(content, at), line });
  }
  return { throws, parameters: parametersOf(content) };
}

/** The condition of the `if` whose block (or single statement) holds position `at`, if it is the nearest. */
function guardBefore(content: string, at: number): string | null {
  const head = content.slice(0, at);
  const start = head.lastIndexOf('if');
  if (start < 0) return null;
  const open = content.indexOf('(', start);
  if (open < 0 || open > at) return null;
  let depth = 0;
  for (let i = open; i < at; i++) {
    const ch = content[i];
    if (ch === '(') depth++;
    else if (ch === ')') {
      depth--;
      if (depth === 0) {
        // Between the condition and the throw only a brace and space may stand: otherwise it is another statement's.
        const between = content.slice(i + 1, at);
        return /^\s*(?:\{\s*)?$/.test(between) ? content.slice(open + 1, i).trim() : null;
      }
    }
  }
  return null;
}

/** Names of the first parameter list, destructured properties included (`{ productId, label = 'x' }`). */
function parametersOf(content: string): string[] {
  const open = content.indexOf('(');
  if (open < 0) return [];
  let depth = 0;
  let end = -1;
  for (let i = open; i < content.length; i++) {
    const ch = content[i];
    if (ch === '(') depth++;
    else if (ch === ')' && --depth === 0) {
      end = i;
      break;
    }
  }
  if (end < 0) return [];
  const list = content.slice(open + 1, end);
  const names = new Set<string>();
  // Names before `=`, `:`, `,`, `}` or the end, at any depth of destructuring; type annotations and default values are skipped.
  for (const part of list.split(/[,{}[\]]/)) {
    const name = /^\s*(?:\.\.\.)?([A-Za-z_$][\w$]*)\s*(?:[=:?]|$)/.exec(part)?.[1];
    if (name && !['string', 'number', 'boolean', 'unknown', 'any', 'object'].includes(name)) names.add(name);
  }
  return [...names];
}
