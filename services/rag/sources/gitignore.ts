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
 * - `*` and `?` do not match `/`; `[a-z]`, `[!a-z]`, `[^a-z]`, `[[:alpha:]]` are character classes,
 *   which do not match `/` either (not even `[[:punct:]]`, as in git's wildmatch);
 *   `**/ ` at the start matches any leading directories, `; /**` at the end everything inside,
 *   `/**\/` in the middle zero or more directories; any other `**` is a `*`.
 * A file under an ignored directory stays ignored whatever later rules say (git does not descend
 * into an ignored directory); `IgnoreStack.ignores` checks every ancestor first for that reason.
 *
 * Matching (wildmatch.ts) never backtracks: a rule costs at most its length times the path's, so a
 * hostile `.gitignore` costs time in proportion to its size, which `MAX_PATTERN_LENGTH` and
 * `MAX_RULES_PER_FILE` bound.
 */

import { compileWildmatch } from './wildmatch.ts';
import type { Wildmatch } from './wildmatch.ts';

export interface IgnoreRule {
  /** the line as written, for messages and tests */
  readonly source: string;
  readonly negate: boolean;
  readonly directoryOnly: boolean;
  /** matched against the path relative to the rule's file (anchored) or against the last segment */
  readonly anchored: boolean;
  /** undefined for a pattern git never matches (an unclosed `[`) */
  readonly matches: Wildmatch | undefined;
}

/**
 * Longer lines are skipped: no one writes such a pattern, and every path checked costs each rule's
 * length times the path's.
 */
export const MAX_PATTERN_LENGTH = 4096;
/** Rules of one file past this many are dropped, for the same reason (the first ones are kept). */
export const MAX_RULES_PER_FILE = 10_000;

/** Parses one line of a `.gitignore`; undefined for blank lines and comments. */
export function parseIgnoreLine(line: string): IgnoreRule | undefined {
  let text = line.endsWith('\r') ? line.slice(0, -1) : line;
  text = stripTrailingSpaces(text);
  if (text === '' || text.startsWith('#') || text.length > MAX_PATTERN_LENGTH) return undefined;
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
  return { source: line, negate, directoryOnly, anchored, matches: compileWildmatch(text, anchored) };
}

export function parseIgnoreFile(content: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (const line of content.split('\n')) {
    const rule = parseIgnoreLine(line);
    if (rule) rules.push(rule);
    if (rules.length === MAX_RULES_PER_FILE) break;
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
    if (!rule.matches?.(rule.anchored ? relativePath : name)) continue;
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
