import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The retrieval fixture (a small repository of TypeScript, Python and Markdown). */
export const FIXTURE = new URL('../../fixtures/rag-repo/', import.meta.url).pathname;

/** 1-based line of the first line containing `text` in a fixture file. */
export function lineOf(path: string, text: string): number {
  const index = readFileSync(join(FIXTURE, path), 'utf8')
    .split('\n')
    .findIndex((l) => l.includes(text));
  if (index === -1) throw new Error(`${path} has no line with ${text}`);
  return index + 1;
}

/** What indexing the fixture keeps: debug.log (ignored) and logo.png (binary) are skipped. */
export const FIXTURE_INDEXED_PATHS: readonly string[] = [
  '.gitignore',
  'docs/setup.md',
  'src/cache/lru.ts',
  'src/http/routes.ts',
  'src/retry.ts',
  'tools/slugify.py',
];

/** Questions about the fixture, the file that answers each, and a line the first result must span. */
export const FIXTURE_CASES: ReadonlyArray<{ query: string; file: string; from: [string, string] }> = [
  { query: 'wait longer between attempts, with random jitter', file: 'src/retry.ts', from: ['src/retry.ts', 'export function delayFor'] },
  { query: 'withBackoff', file: 'src/retry.ts', from: ['src/retry.ts', 'export async function withBackoff'] },
  { query: 'turn a heading into a URL fragment', file: 'tools/slugify.py', from: ['tools/slugify.py', 'def slugify'] },
  {
    query: 'load the JSON settings with defaults for missing keys',
    file: 'tools/slugify.py',
    from: ['tools/slugify.py', 'def read_settings'],
  },
  {
    query: 'which environment variables set the listening port',
    file: 'docs/setup.md',
    from: ['docs/setup.md', '### Environment variables'],
  },
  {
    query: 'forget the entry used least recently when full',
    file: 'src/cache/lru.ts',
    from: ['src/cache/lru.ts', 'export class LruCache'],
  },
];
