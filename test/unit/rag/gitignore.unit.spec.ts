import { expect } from 'chai';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  IgnoreStack,
  MAX_PATTERN_LENGTH,
  MAX_RULES_PER_FILE,
  parseIgnoreFile,
  parseIgnoreLine,
  verdict,
} from '../../../services/rag/sources/gitignore.ts';

/** Whether `path` is ignored by one `.gitignore` at the root (ancestors checked first, as git does). */
function ignored(lines: string, path: string, isDirectory = false): boolean {
  return new IgnoreStack().with('', parseIgnoreFile(lines)).ignores(path, isDirectory);
}

describe('rag sources: gitignore matching (unit)', () => {
  it('skips blank lines and comments, keeps an escaped #', () => {
    expect(parseIgnoreLine('')).to.equal(undefined);
    expect(parseIgnoreLine('   ')).to.equal(undefined);
    expect(parseIgnoreLine('# a comment')).to.equal(undefined);
    expect(ignored('\\#notes', '#notes')).to.equal(true);
    expect(ignored('# notes', 'notes')).to.equal(false);
  });

  it('matches a name without a slash at any depth', () => {
    expect(ignored('*.log', 'debug.log')).to.equal(true);
    expect(ignored('*.log', 'a/b/debug.log')).to.equal(true);
    expect(ignored('*.log', 'debug.log.txt')).to.equal(false);
    expect(ignored('secret', 'config/secret')).to.equal(true);
  });

  it('anchors a pattern with a leading or middle slash to its directory', () => {
    expect(ignored('/todo.txt', 'todo.txt')).to.equal(true);
    expect(ignored('/todo.txt', 'sub/todo.txt')).to.equal(false);
    expect(ignored('doc/frotz', 'doc/frotz')).to.equal(true);
    expect(ignored('doc/frotz', 'a/doc/frotz')).to.equal(false);
  });

  it('matches directories only with a trailing slash, and everything under them', () => {
    expect(ignored('build/', 'build', true)).to.equal(true);
    expect(ignored('build/', 'build', false)).to.equal(false);
    expect(ignored('build/', 'src/build/out.js')).to.equal(true);
    expect(ignored('/build/', 'src/build/out.js')).to.equal(false);
  });

  it('re-includes with ! and lets the last matching rule win', () => {
    expect(ignored('*.log\n!keep.log', 'keep.log')).to.equal(false);
    expect(ignored('*.log\n!keep.log', 'other.log')).to.equal(true);
    expect(ignored('!keep.log\n*.log', 'keep.log')).to.equal(true);
    expect(ignored('\\!important', '!important')).to.equal(true);
  });

  it('cannot re-include a file whose directory is ignored', () => {
    expect(ignored('logs/\n!logs/keep.log', 'logs/keep.log')).to.equal(true);
    // ignoring the directory's contents (not the directory) leaves room for an exception
    expect(ignored('logs/*\n!logs/keep.log', 'logs/keep.log')).to.equal(false);
    expect(ignored('logs/*\n!logs/keep.log', 'logs/other.log')).to.equal(true);
  });

  it('handles ** at the start, the end and in the middle', () => {
    expect(ignored('**/foo', 'foo')).to.equal(true);
    expect(ignored('**/foo', 'a/b/foo')).to.equal(true);
    expect(ignored('**/foo/bar', 'x/foo/bar')).to.equal(true);
    expect(ignored('abc/**', 'abc/x')).to.equal(true);
    expect(ignored('abc/**', 'abc/x/y.txt')).to.equal(true);
    expect(ignored('abc/**', 'abc', true)).to.equal(false);
    expect(ignored('a/**/b', 'a/b')).to.equal(true);
    expect(ignored('a/**/b', 'a/x/b')).to.equal(true);
    expect(ignored('a/**/b', 'a/x/y/b')).to.equal(true);
    expect(ignored('a/**/b', 'c/a/x/b')).to.equal(false);
    // any other ** is a *
    expect(ignored('foo**bar', 'fooXbar')).to.equal(true);
    expect(ignored('/foo**bar', 'foo/bar')).to.equal(false);
  });

  it('keeps * and ? within one segment', () => {
    expect(ignored('/a/*.js', 'a/x.js')).to.equal(true);
    expect(ignored('/a/*.js', 'a/b/x.js')).to.equal(false);
    expect(ignored('file?.txt', 'file1.txt')).to.equal(true);
    expect(ignored('file?.txt', 'file12.txt')).to.equal(false);
    expect(ignored('/a?b', 'a/b')).to.equal(false);
  });

  it('supports character classes, ranges, negation and POSIX classes', () => {
    expect(ignored('*.[oa]', 'x.o')).to.equal(true);
    expect(ignored('*.[oa]', 'x.a')).to.equal(true);
    expect(ignored('*.[oa]', 'x.c')).to.equal(false);
    expect(ignored('log[0-9].txt', 'log7.txt')).to.equal(true);
    expect(ignored('log[0-9].txt', 'logx.txt')).to.equal(false);
    expect(ignored('log[!0-9].txt', 'logx.txt')).to.equal(true);
    expect(ignored('log[^0-9].txt', 'log7.txt')).to.equal(false);
    expect(ignored('x[[:digit:]]', 'x5')).to.equal(true);
    expect(ignored('x[[:digit:]]', 'xa')).to.equal(false);
    expect(ignored('[]]x', ']x')).to.equal(true);
    // a negated class never matches the separator
    expect(ignored('/a[!x]b', 'a/b')).to.equal(false);
  });

  it('never matches a pattern with an unclosed class, and does not throw', () => {
    expect(parseIgnoreLine('[abc')?.matches).to.equal(undefined);
    expect(ignored('[abc', '[abc')).to.equal(false);
    expect(ignored('[z-a]', 'q')).to.equal(false);
  });

  it('treats regular expression characters literally', () => {
    expect(ignored('a+b(c).txt', 'a+b(c).txt')).to.equal(true);
    expect(ignored('a.b', 'axb')).to.equal(false);
    expect(ignored('$x^', '$x^')).to.equal(true);
  });

  it('drops trailing spaces unless escaped, and a carriage return', () => {
    expect(ignored('foo   ', 'foo')).to.equal(true);
    expect(ignored('foo\\ ', 'foo ')).to.equal(true);
    expect(ignored('foo\\ ', 'foo')).to.equal(false);
    expect(ignored('foo\r\nbar\r\n', 'bar')).to.equal(true);
  });

  it('lets a deeper .gitignore override a higher one, for paths below it only', () => {
    const stack = new IgnoreStack().with('', parseIgnoreFile('*.gen.ts')).with('src/keep', parseIgnoreFile('!*.gen.ts'));
    expect(stack.ignores('src/a.gen.ts', false)).to.equal(true);
    expect(stack.ignores('src/keep/a.gen.ts', false)).to.equal(false);
    // patterns of a nested file are relative to its directory
    const nested = new IgnoreStack().with('pkg', parseIgnoreFile('/dist'));
    expect(nested.ignores('pkg/dist', true)).to.equal(true);
    expect(nested.ignores('dist', true)).to.equal(false);
    expect(nested.ignores('pkg/sub/dist', true)).to.equal(false);
  });

  it('returns no verdict when nothing matches', () => {
    expect(verdict(parseIgnoreFile('*.log'), 'a.ts', false)).to.equal(undefined);
    expect(verdict(parseIgnoreFile('*.log\n!a.log'), 'a.log', false)).to.equal('include');
  });

  it('skips a pattern line longer than MAX_PATTERN_LENGTH and rules past MAX_RULES_PER_FILE', () => {
    expect(parseIgnoreLine('a'.repeat(MAX_PATTERN_LENGTH))?.matches?.('a'.repeat(MAX_PATTERN_LENGTH))).to.equal(true);
    expect(parseIgnoreLine('*'.repeat(MAX_PATTERN_LENGTH + 1))).to.equal(undefined);
    const lines = Array.from({ length: MAX_RULES_PER_FILE + 5 }, (_, i) => `f${i}`);
    const rules = parseIgnoreFile(lines.join('\n'));
    expect(rules).to.have.length(MAX_RULES_PER_FILE);
    expect(rules.at(-1)?.source).to.equal(`f${MAX_RULES_PER_FILE - 1}`);
  });

  it('agrees with git check-ignore on a mixed set of patterns and paths', function () {
    if (spawnSync('git', ['--version']).error) this.skip();
    const patterns = [
      '*.log',
      '!keep.log',
      '/todo.txt',
      'doc/frotz',
      'build/',
      'logs/*',
      '!logs/keep.txt',
      '**/foo',
      'abc/**',
      'a/**/b',
      'foo**bar',
      'file?.txt',
      '*.[oa]',
      'log[!0-9].txt',
      'x[[:digit:]]',
      '[]]x',
      '/a[!x]b',
      'a+b(c).txt',
      'trail\\ ',
      'deep/*/z',
      '*/mid/*.js',
      '\\!bang',
      'q[a-c]*',
      '**/*.min.*',
      '/p[[:punct:]]q',
      '/r[+-0]s',
    ];
    const paths = [
      'debug.log',
      'keep.log',
      'sub/keep.log',
      'todo.txt',
      'sub/todo.txt',
      'doc/frotz',
      'x/doc/frotz',
      'build/o.js',
      'src/build/o.js',
      'logs/keep.txt',
      'logs/x.txt',
      'foo',
      'a/b/foo',
      'foo/x',
      'abc/x',
      'abc/x/y',
      'a/b',
      'a/x/b',
      'a/x/y/b',
      'c/a/x/b',
      'fooXbar',
      'foo/bar',
      'file1.txt',
      'file12.txt',
      'x.o',
      'x.c',
      'logx.txt',
      'log7.txt',
      'x5',
      'xa',
      ']x',
      'a/b2',
      'axb',
      'a+b(c).txt',
      'trail ',
      'trail',
      'deep/q/z',
      'deep/q/r/z',
      'p/mid/a.js',
      'mid/a.js',
      'p/q/mid/a.js',
      '!bang',
      'qa',
      'qbz',
      'qd',
      'lib/x.min.js',
      'x.min.css',
      'p/q',
      'p.q',
      'r/s',
      'r.s',
    ];
    const dir = mkdtempSync(join(tmpdir(), 'rag-gitignore-'));
    try {
      execFileSync('git', ['init', '-q', dir]);
      writeFileSync(join(dir, '.gitignore'), `${patterns.join('\n')}\n`);
      const stack = new IgnoreStack().with('', parseIgnoreFile(patterns.join('\n')));
      const disagreements = paths.filter((path) => {
        const byGit = spawnSync('git', ['-C', dir, 'check-ignore', '-q', '--no-index', path]).status === 0;
        return byGit !== stack.ignores(path, false);
      });
      expect(disagreements).to.deep.equal([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
