import { expect } from 'chai';
import fc from 'fast-check';
import { Worker } from 'node:worker_threads';
import { IgnoreStack, parseIgnoreFile, verdict } from '../../../services/rag/sources/gitignore.ts';

/**
 * Matching cost of `.gitignore` rules (issue 23: a pushed `*a*a*a*a*a*a*a*a*b` froze the process)
 * and the matcher's semantics against a slow reference, beyond the examples of gitignore.unit.spec.ts.
 */

interface BlowUpCase {
  readonly label: string;
  readonly gitignore: string;
  readonly path: string;
  readonly ignored: boolean;
}

// Runs in a worker so that a matcher that backtracks exponentially can be stopped: the main thread
// keeps its timers and ends the worker when the budget is spent. Each answer is posted as it comes,
// so a failure names the case that hung.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
(async () => {
  const { IgnoreStack, parseIgnoreFile } = await import(workerData.gitignoreUrl);
  const { readPushedFiles } = await import(workerData.pushedUrl);
  for (const { label, gitignore, path } of workerData.cases) {
    const stack = new IgnoreStack().with('', parseIgnoreFile(gitignore));
    const pushed = readPushedFiles([{ path: '.gitignore', content: gitignore }, { path, content: 'x' }]);
    const skipped = pushed.find((entry) => entry.path === path)?.skipped;
    parentPort.postMessage({ label, ignored: stack.ignores(path, false), pushedIgnored: skipped === 'ignored' });
  }
  parentPort.postMessage('done');
})();
`;

interface Answer {
  readonly label: string;
  readonly ignored: boolean;
  readonly pushedIgnored: boolean;
}

function matchInWorker(cases: readonly BlowUpCase[], budgetMs: number): Promise<{ answers: Answer[]; finished: boolean }> {
  return new Promise((resolve, reject) => {
    const answers: Answer[] = [];
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        cases,
        gitignoreUrl: new URL('../../../services/rag/sources/gitignore.ts', import.meta.url).href,
        pushedUrl: new URL('../../../services/rag/sources/pushed.ts', import.meta.url).href,
      },
    });
    const end = (finished: boolean): void => {
      clearTimeout(timer);
      worker.removeAllListeners();
      void worker.terminate();
      resolve({ answers, finished });
    };
    const timer = setTimeout(() => end(false), budgetMs);
    worker.on('message', (message: Answer | 'done') => (message === 'done' ? end(true) : answers.push(message)));
    worker.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    worker.once('exit', () => end(false));
  });
}

describe('rag sources: gitignore matching cost and semantics (unit)', () => {
  it('answers at once for patterns a backtracking matcher needs forever for, and still matches them (issue 23)', async function () {
    this.timeout(30_000);
    const eight = '*a*a*a*a*a*a*a*a*b';
    const thirty = `${'*a'.repeat(30)}b`;
    const a110 = 'a'.repeat(110);
    const a1000 = 'a'.repeat(1000);
    const cases: BlowUpCase[] = [
      { label: 'eight stars, 110 a', gitignore: eight, path: a110, ignored: false },
      { label: 'eight stars, 1000 a', gitignore: eight, path: a1000, ignored: false },
      { label: 'thirty stars, 110 a', gitignore: thirty, path: a110, ignored: false },
      { label: 'thirty stars, 1000 a', gitignore: thirty, path: a1000, ignored: false },
      { label: 'anchored, 110 a', gitignore: `/${eight}`, path: a110, ignored: false },
      { label: 'after **/, in a directory', gitignore: `**/${thirty}`, path: `d/${a110}`, ignored: false },
      { label: 'many **/ segments', gitignore: `${'**/'.repeat(12)}b`, path: `${'a/'.repeat(60)}c`, ignored: false },
      { label: 'a class and stars', gitignore: `${'*[a]'.repeat(20)}b`, path: a110, ignored: false },
      // and they still match what they describe
      { label: 'eight stars, 110 a and b', gitignore: eight, path: `${a110}b`, ignored: true },
      { label: 'thirty stars, 29 a and b', gitignore: thirty, path: `${'a'.repeat(29)}b`, ignored: false },
      { label: 'thirty stars, 30 xa and b', gitignore: thirty, path: `${'xa'.repeat(30)}b`, ignored: true },
      { label: 'many **/ segments, b', gitignore: `${'**/'.repeat(12)}b`, path: `${'a/'.repeat(60)}b`, ignored: true },
    ];
    const { answers, finished } = await matchInWorker(cases, 5_000);
    expect(finished, `no answer within 5 s after: ${answers.map((a) => a.label).join(', ') || 'none'}`).to.equal(true);
    expect(answers).to.deep.equal(cases.map(({ label, ignored }) => ({ label, ignored, pushedIgnored: ignored })));
  });

  it('never lets a class match a slash, as git does', () => {
    const ignored = (lines: string, path: string): boolean => new IgnoreStack().with('', parseIgnoreFile(lines)).ignores(path, false);
    expect(ignored('/a[[:punct:]]b', 'a/b')).to.equal(false);
    expect(ignored('/a[+-0]b', 'a/b')).to.equal(false);
    expect(ignored('/a[+-0]b', 'a.b')).to.equal(true);
  });

  describe('agrees with a slow recursive wildmatch', () => {
    // Pattern pieces with a subject piece each matches, so that generated pairs match often
    // enough to pin the positive side too; the other pieces are syntax to get wrong.
    const pieces: ReadonlyArray<readonly [string, readonly string[]]> = [
      ['a', ['a', 'b']],
      ['b', ['b']],
      ['/', ['/', 'a']],
      ['*', ['', 'a', 'ab', '/', '*']],
      ['?', ['a', '?', '/']],
      ['[', ['[']],
      [']', [']']],
      ['!', ['!']],
      ['\\', ['\\', '']],
      ['-', ['-']],
      ['^', ['^']],
      ['**', ['', 'a', 'a/b', 'a/', '/']],
      ['/**', ['/', '/a', '/a/b', '']],
      ['**/', ['', 'a/', 'a/b/', '/']],
      ['/**/', ['/', '/a/', '/a/b/', '//']],
      ['[ab]', ['a', 'b', '/']],
      ['[!a]', ['b', 'a', '/']],
      ['[^a-b]', ['c', 'a']],
      ['[]a]', [']', 'a']],
      ['[a-]', ['-', 'a']],
      ['[z-a]', ['q']],
      ['[+-0]', ['/', '.', '+']],
      ['[[:alpha:]]', ['a', '1']],
      ['[[:punct:]]', ['/', '!', 'a']],
      ['[[:nope:]]', ['n']],
      ['\\*', ['*', 'a']],
      ['\\[', ['[']],
      ['é', ['é']],
      ['😀', ['😀', '?']],
    ];
    const pair = fc.tuple(fc.integer({ min: 0, max: pieces.length - 1 }), fc.nat()).map(([p, n]) => {
      const [pattern, subjects] = pieces[p] as readonly [string, readonly string[]];
      return [pattern, subjects[n % subjects.length] as string] as const;
    });
    const linesAndPaths = fc
      .tuple(fc.constantFrom('', '!', '/', '!/', '**/'), fc.array(pair, { maxLength: 8 }), fc.constantFrom('', '/'))
      .map(([lead, pairs, trail]) => ({
        line: lead + pairs.map(([pattern]) => pattern).join('') + trail,
        path: pairs.map(([, subject]) => subject).join(''),
      }));
    const alphabet = ['a', 'b', '/', '*', '?', '[', ']', '!', '\\', '-', '^', ':'];
    const randomText = fc.array(fc.constantFrom(...alphabet), { maxLength: 10 }).map((chars) => chars.join(''));

    it('on patterns and paths built to match', () => {
      const seen = { ignore: 0, include: 0, none: 0 };
      fc.assert(
        fc.property(linesAndPaths, fc.boolean(), ({ line, path }, isDirectory) => {
          const ours = verdict(parseIgnoreFile(line), path, isDirectory);
          seen[ours ?? 'none']++;
          return ours === referenceVerdict(line, path, isDirectory);
        }),
        { numRuns: 4000 },
      );
      // not a vacuous property: every outcome came up
      expect(Math.min(seen.ignore, seen.include, seen.none)).to.be.greaterThan(100);
    });

    it('on random patterns and paths over a b / * ? [ ] ! \\ - ^ :', () => {
      fc.assert(
        fc.property(
          randomText,
          randomText,
          fc.boolean(),
          (line, path, isDirectory) => verdict(parseIgnoreFile(line), path, isDirectory) === referenceVerdict(line, path, isDirectory),
        ),
        { numRuns: 4000 },
      );
    });
  });
});

// ---- reference: gitignore(5) line rules and a backtracking wildmatch, written for clarity, not speed

function referenceVerdict(line: string, path: string, isDirectory: boolean): 'ignore' | 'include' | undefined {
  let text = line;
  while (text.endsWith(' ') && !text.endsWith('\\ ')) text = text.slice(0, -1);
  if (text === '' || text.startsWith('#')) return undefined;
  const negate = text.startsWith('!');
  if (negate) text = text.slice(1);
  const directoryOnly = text.endsWith('/') && !text.endsWith('\\/');
  if (directoryOnly) text = text.slice(0, -1);
  if (text === '' || (directoryOnly && !isDirectory)) return undefined;
  const anchored = text.includes('/');
  if (text.startsWith('/')) text = text.slice(1);
  let matched: boolean;
  if (anchored) {
    const segments = text.split('/').map((segment) => [...segment]);
    matched = segments.every((segment) => segment.join('') === '**' || isValid(segment)) && matchSegments(segments, 0, [...path], 0);
  } else {
    const pattern = [...text];
    matched = isValid(pattern) && matchGlob(pattern, 0, [...path.slice(path.lastIndexOf('/') + 1)], 0);
  }
  if (!matched) return undefined;
  return negate ? 'include' : 'ignore';
}

/** Segments of an anchored pattern against `subject` from `at`: `**` segments take whole directories. */
function matchSegments(segments: readonly string[][], index: number, subject: readonly string[], at: number): boolean {
  const segment = segments[index] as string[];
  const last = index === segments.length - 1;
  if (segment.join('') === '**') {
    if (last) return index === 0 || at < subject.length;
    if (matchSegments(segments, index + 1, subject, at)) return true;
    for (let i = at; i < subject.length; i++) if (subject[i] === '/' && matchSegments(segments, index + 1, subject, i + 1)) return true;
    return false;
  }
  // nothing in a segment matches `/`, so it spans exactly up to the next one
  let end = subject.indexOf('/', at);
  if (end === -1) end = subject.length;
  if (!matchGlob(segment, 0, subject.slice(at, end), 0)) return false;
  return last ? end === subject.length : end < subject.length && matchSegments(segments, index + 1, subject, end + 1);
}

function isValid(pattern: readonly string[]): boolean {
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] === '\\') {
      if (i + 1 >= pattern.length) return false;
      i++;
    } else if (pattern[i] === '[') {
      const parsed = referenceClass(pattern, i);
      if (!parsed) return false;
      i = parsed.next - 1;
    }
  }
  return true;
}

function matchGlob(pattern: readonly string[], p: number, subject: readonly string[], s: number): boolean {
  if (p === pattern.length) return s === subject.length;
  const c = pattern[p];
  if (c === '*') {
    let after = p;
    while (pattern[after] === '*') after++;
    for (let t = s; t <= subject.length; t++) {
      if (t > s && subject[t - 1] === '/') return false;
      if (matchGlob(pattern, after, subject, t)) return true;
    }
    return false;
  }
  if (s === subject.length) return false;
  const x = subject[s] as string;
  if (c === '?') return x !== '/' && matchGlob(pattern, p + 1, subject, s + 1);
  if (c === '[') {
    const parsed = referenceClass(pattern, p);
    // biome-ignore lint/complexity/useOptionalChain: the reference returns a boolean; an optional chain would make it boolean | undefined
    return parsed !== undefined && parsed.test(x) && matchGlob(pattern, parsed.next, subject, s + 1);
  }
  if (c === '\\') return pattern[p + 1] === x && matchGlob(pattern, p + 2, subject, s + 1);
  return c === x && matchGlob(pattern, p + 1, subject, s + 1);
}

const REFERENCE_POSIX: Record<string, RegExp> = {
  alnum: /^[A-Za-z0-9]$/,
  alpha: /^[A-Za-z]$/,
  blank: /^[ \t]$/,
  cntrl: /^[\x00-\x1f\x7f]$/,
  digit: /^[0-9]$/,
  graph: /^[!-~]$/,
  lower: /^[a-z]$/,
  print: /^[ -~]$/,
  punct: /^[!-/:-@[-`{-~]$/,
  space: /^[ \t\n\r\f\v]$/,
  upper: /^[A-Z]$/,
  xdigit: /^[0-9A-Fa-f]$/,
};

/** The class opening at `start`: its test and the index after its `]`, or undefined when git would never match. */
function referenceClass(pattern: readonly string[], start: number): { test: (c: string) => boolean; next: number } | undefined {
  let i = start + 1;
  const negated = pattern[i] === '!' || pattern[i] === '^';
  if (negated) i++;
  const members: Array<(c: string) => boolean> = [];
  for (let first = true; i < pattern.length; first = false) {
    if (pattern[i] === ']' && !first) {
      return { test: (c) => c !== '/' && members.some((member) => member(c)) !== negated, next: i + 1 };
    }
    if (pattern[i] === '[' && pattern[i + 1] === ':') {
      let close = i + 2;
      while (close + 1 < pattern.length && !(pattern[close] === ':' && pattern[close + 1] === ']')) close++;
      if (close + 1 >= pattern.length) return undefined;
      const posix = REFERENCE_POSIX[pattern.slice(i + 2, close).join('')];
      if (!posix) return undefined;
      members.push((c) => posix.test(c));
      i = close + 2;
      continue;
    }
    let low = pattern[i] as string;
    if (low === '\\') {
      i++;
      if (i >= pattern.length) return undefined;
      low = pattern[i] as string;
    }
    i++;
    if (pattern[i] === '-' && i + 1 < pattern.length && pattern[i + 1] !== ']') {
      let high = pattern[i + 1] as string;
      i += 2;
      if (high === '\\') {
        if (i >= pattern.length) return undefined;
        high = pattern[i] as string;
        i++;
      }
      const from = low.codePointAt(0) as number;
      const to = high.codePointAt(0) as number;
      members.push((c) => (c.codePointAt(0) as number) >= from && (c.codePointAt(0) as number) <= to);
      continue;
    }
    const literal = low;
    members.push((c) => c === literal);
  }
  return undefined;
}
