/**
 * `.gitignore` matching with git's semantics (gitignore(5) and its wildmatch), so that a project
 * indexed from a folder holds what `git status` would show, not build output or secrets listed
 * there. Written here rather than taken from npm: the rules are small, and the walker needs them per
 * directory level (a deeper file overrides a higher one), which the usual packages leave to the caller.
 *
 * Rules of one file are matched against the path relative to that file's directory:
 * - blank lines and `#` comments are skipped (`\#` is a literal `#`); trailing spaces are dropped
 *   unless escaped (`\ `);
 * - `!` re-includes (`\!` is a literal `!`); the last matching rule wins;
 * - a trailing `/` matches directories only;
 * - a `/` at the start or in the middle anchors the pattern to the file's directory; otherwise it
 *   matches the name at any depth below it;
 * - `*` and `?` do not match `/`; `[a-z]`, `[!a-z]`, `[^a-z]`, `[[:alpha:]]` are character classes;
 *   `**/` at the start matches any leading directories, `/**` at the end everything inside,
 *   `/**\/` in the middle zero or more directories; any other `**` is a `*`.
 * A file under an ignored directory stays ignored whatever later rules say (git does not descend
 * into an ignored directory); `IgnoreStack.ignores` checks every ancestor first for that reason.
 */

export interface IgnoreRule {
  /** the line as written, for messages and tests */
  readonly source: string;
  readonly negate: boolean;
  readonly directoryOnly: boolean;
  /** matched against the path relative to the rule's file (anchored) or against the last segment */
  readonly anchored: boolean;
  /** undefined for a pattern git never matches (an unclosed `[`) */
  readonly regex: RegExp | undefined;
}

const POSIX_CLASSES: Record<string, string> = {
  alnum: 'a-zA-Z0-9',
  alpha: 'a-zA-Z',
  blank: ' \\t',
  cntrl: '\\x00-\\x1f\\x7f',
  digit: '0-9',
  graph: '\\x21-\\x7e',
  lower: 'a-z',
  print: '\\x20-\\x7e',
  punct: '!-\\/:-@\\[-`{-~',
  space: ' \\t\\n\\r\\f\\v',
  upper: 'A-Z',
  xdigit: '0-9a-fA-F',
};

/** Parses one line of a `.gitignore`; undefined for blank lines and comments. */
export function parseIgnoreLine(line: string): IgnoreRule | undefined {
  let text = line.endsWith('\r') ? line.slice(0, -1) : line;
  text = stripTrailingSpaces(text);
  if (text === '' || text.startsWith('#')) return undefined;
  let negate = false;
  if (text.startsWith('!')) {
    negate = true;
    text = text.slice(1);
  }
  let directoryOnly = false;
  if (text.endsWith('/') && !text.endsWith('\\/')) {
    directoryOnly = true;
    text = text.slice(0, -1);
  }
  if (text === '') return undefined;
  const anchored = text.includes('/');
  if (text.startsWith('/')) text = text.slice(1);
  const body = anchored ? translateAnchored(text) : translateSegment(text);
  return {
    source: line,
    negate,
    directoryOnly,
    anchored,
    regex: body === undefined ? undefined : new RegExp(`^${body}$`, 'su'),
  };
}

export function parseIgnoreFile(content: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (const line of content.split('\n')) {
    const rule = parseIgnoreLine(line);
    if (rule) rules.push(rule);
  }
  return rules;
}

/**
 * The verdict of one rule list for a path relative to its directory: 'ignore', 'include' (a `!`
 * rule matched last) or undefined (no rule matched).
 */
export function verdict(rules: readonly IgnoreRule[], relativePath: string, isDirectory: boolean): 'ignore' | 'include' | undefined {
  const name = relativePath.slice(relativePath.lastIndexOf('/') + 1);
  for (let i = rules.length - 1; i >= 0; i--) {
    const rule = rules[i] as IgnoreRule;
    if (rule.directoryOnly && !isDirectory) continue;
    if (!rule.regex?.test(rule.anchored ? relativePath : name)) continue;
    return rule.negate ? 'include' : 'ignore';
  }
  return undefined;
}

/** The rule files that apply below some directory, from the root down. */
export class IgnoreStack {
  readonly #levels: ReadonlyArray<{ readonly base: string; readonly rules: readonly IgnoreRule[] }>;

  constructor(levels: ReadonlyArray<{ readonly base: string; readonly rules: readonly IgnoreRule[] }> = []) {
    this.#levels = levels;
  }

  /** A stack with one more level: `base` is the directory of the rules, relative to the root ('' for the root). */
  with(base: string, rules: readonly IgnoreRule[]): IgnoreStack {
    return rules.length === 0 ? this : new IgnoreStack([...this.#levels, { base, rules }]);
  }

  /**
   * Whether `path` itself (relative to the root, `/` separators) is ignored, assuming its parent
   * directories are not: deeper files override higher ones, the last matching rule of a file wins.
   */
  ignoresEntry(path: string, isDirectory: boolean): boolean {
    for (let i = this.#levels.length - 1; i >= 0; i--) {
      const level = this.#levels[i] as { base: string; rules: readonly IgnoreRule[] };
      if (level.base !== '' && !path.startsWith(`${level.base}/`)) continue;
      const relative = level.base === '' ? path : path.slice(level.base.length + 1);
      const found = verdict(level.rules, relative, isDirectory);
      if (found !== undefined) return found === 'ignore';
    }
    return false;
  }

  /** Whether `path` or any directory above it is ignored (what a walker that does not descend into ignored directories decides). */
  ignores(path: string, isDirectory: boolean): boolean {
    const segments = path.split('/');
    for (let i = 1; i < segments.length; i++) {
      if (this.ignoresEntry(segments.slice(0, i).join('/'), true)) return true;
    }
    return this.ignoresEntry(path, isDirectory);
  }
}

function stripTrailingSpaces(text: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === ' ') {
    // An escaped space ends the pattern there: `foo\ ` keeps one space.
    if (end >= 2 && text[end - 2] === '\\') break;
    end--;
  }
  return text.slice(0, end);
}

/** An anchored pattern: `**` segments may cross directories. */
function translateAnchored(pattern: string): string | undefined {
  const segments = pattern.split('/');
  let out = '';
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i] as string;
    const last = i === segments.length - 1;
    if (segment === '**') {
      // `a/**` is everything inside a; `**/b` and `a/**/b` allow zero or more directories.
      out += last ? (i === 0 ? '.*' : '.+') : '(?:.*/)?';
      continue;
    }
    const translated = translateSegment(segment);
    if (translated === undefined) return undefined;
    out += translated + (last ? '' : '/');
  }
  return out;
}

/** One path segment (no `/`): `*`, `?`, classes, escapes. */
function translateSegment(segment: string): string | undefined {
  let out = '';
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i] as string;
    if (c === '*') {
      while (segment[i + 1] === '*') i++;
      out += '[^/]*';
    } else if (c === '?') {
      out += '[^/]';
    } else if (c === '[') {
      const parsed = characterClass(segment, i);
      if (!parsed) return undefined;
      out += parsed.regex;
      i = parsed.end;
    } else if (c === '\\') {
      const next = segment[i + 1];
      if (next === undefined) return undefined;
      out += escapeRegex(next);
      i++;
    } else {
      out += escapeRegex(c);
    }
  }
  return out;
}

/** `[...]` starting at `start`; the index of its closing `]`, or undefined when it never closes. */
function characterClass(text: string, start: number): { regex: string; end: number } | undefined {
  let i = start + 1;
  let negated = false;
  if (text[i] === '!' || text[i] === '^') {
    negated = true;
    i++;
  }
  let body = '';
  let first = true;
  for (; i < text.length; i++) {
    const c = text[i] as string;
    if (c === ']' && !first) {
      // A negated class never matches `/` (wildmatch with WM_PATHNAME).
      return { regex: negated ? `[^/${body}]` : `[${body}]`, end: i };
    }
    first = false;
    if (c === '[' && text[i + 1] === ':') {
      const close = text.indexOf(':]', i + 2);
      const name = close === -1 ? undefined : text.slice(i + 2, close);
      const range = name === undefined ? undefined : POSIX_CLASSES[name];
      if (range === undefined) return undefined;
      body += range;
      i = close + 1;
      continue;
    }
    let literal = c;
    if (c === '\\') {
      const next = text[i + 1];
      if (next === undefined) return undefined;
      literal = next;
      i++;
    }
    if (text[i + 1] === '-' && text[i + 2] !== undefined && text[i + 2] !== ']') {
      let to = text[i + 2] as string;
      let skip = 2;
      if (to === '\\') {
        const next = text[i + 3];
        if (next === undefined) return undefined;
        to = next;
        skip = 3;
      }
      // A reversed range matches nothing in git; as a regex it would throw.
      if (to >= literal) body += `${escapeClassChar(literal)}-${escapeClassChar(to)}`;
      i += skip;
      continue;
    }
    body += escapeClassChar(literal);
  }
  return undefined;
}

function escapeRegex(c: string): string {
  return /[.*+?^${}()|[\]\\/]/.test(c) ? `\\${c}` : c;
}

function escapeClassChar(c: string): string {
  return /[\]\\^-]/.test(c) ? `\\${c}` : c;
}
