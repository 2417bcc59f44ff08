/**
 * The files of a project folder worth indexing, in a stable order (code-unit order of names, depth
 * first), each checked against the skip rules once while listing, so the indexer knows every
 * file's hash before it reads any of them again.
 */

import type { Dirent, Stats } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import { readContained } from './contained-read.ts';
import { join, sep } from 'node:path';
import { IgnoreStack, parseIgnoreFile } from './gitignore.ts';
import { DEFAULT_MAX_FILE_BYTES, DEFAULT_SKIPPED_DIRECTORIES, decodeSource, skipByName } from './skip-rules.ts';
import { hashText, SkippedSourceError } from './source-file.ts';
import type { SkipReason, SourceEntry, SourceFile } from './source-file.ts';

export interface WalkOptions {
  /** files larger than this many bytes are skipped as `too-large` (default 1 MB) */
  readonly maxFileBytes?: number;
  /** directory names never entered, at any depth (default `DEFAULT_SKIPPED_DIRECTORIES`) */
  readonly skipDirectories?: readonly string[];
  /** extra gitignore lines, applied as if in a `.gitignore` at the root, below the project's own */
  readonly ignorePatterns?: readonly string[];
  /** honour `.gitignore` files and `.git/info/exclude` (default true) */
  readonly gitignore?: boolean;
}

interface Walk {
  readonly realRoot: string;
  readonly maxFileBytes: number;
  readonly skipDirectories: ReadonlySet<string>;
  readonly gitignore: boolean;
  /** real paths of the directories entered: a symlink back to one of them is not followed twice (no loops) */
  readonly visited: Set<string>;
}

/**
 * Lists `root` recursively: `SourceFile`s for files to index and `SkippedFile`s (with a reason) for
 * files that are not. Directories that are skipped (always-skipped names, ignored ones) are not
 * entered, and what they hold is not reported. Symlinks are followed only when they resolve inside
 * the root (checked on the real path), and a directory reached twice is walked once.
 */
export async function* walkProject(root: string, options: WalkOptions = {}): AsyncGenerator<SourceEntry> {
  const realRoot = await realpath(root);
  if (!(await stat(realRoot)).isDirectory()) throw new Error(`${root} is not a directory`);
  const walk: Walk = {
    realRoot,
    maxFileBytes: options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
    skipDirectories: new Set(options.skipDirectories ?? DEFAULT_SKIPPED_DIRECTORIES),
    gitignore: options.gitignore ?? true,
    visited: new Set([realRoot]),
  };
  let stack = new IgnoreStack();
  if (options.ignorePatterns?.length) stack = stack.with('', parseIgnoreFile(options.ignorePatterns.join('\n')));
  if (walk.gitignore) stack = stack.with('', await readRules(realRoot, join(realRoot, '.git', 'info', 'exclude')));
  yield* walkDirectory(walk, '', realRoot, stack);
}

async function* walkDirectory(walk: Walk, relative: string, realDir: string, parentStack: IgnoreStack): AsyncGenerator<SourceEntry> {
  const stack = walk.gitignore ? parentStack.with(relative, await readRules(walk.realRoot, join(realDir, '.gitignore'))) : parentStack;
  let entries: Dirent[];
  try {
    entries = await readdir(realDir, { withFileTypes: true });
  } catch {
    return; // unreadable directory: nothing in it is known, so nothing is counted
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const path = relative === '' ? entry.name : `${relative}/${entry.name}`;
    const location = join(realDir, entry.name);
    let real = location;
    let kind: 'directory' | 'file' | 'other';
    let stats: Stats | undefined;
    if (entry.isSymbolicLink()) {
      const resolved = await resolveLink(location);
      if (!resolved) {
        yield skipped(path, stack.ignoresEntry(path, false) ? 'ignored' : 'unreadable');
        continue;
      }
      real = resolved.real;
      stats = resolved.stats;
      kind = stats.isDirectory() ? 'directory' : stats.isFile() ? 'file' : 'other';
      if (!inside(walk.realRoot, real)) {
        if (kind !== 'directory') yield skipped(path, stack.ignoresEntry(path, false) ? 'ignored' : 'outside-root');
        continue;
      }
    } else {
      kind = entry.isDirectory() ? 'directory' : entry.isFile() ? 'file' : 'other';
    }
    if (kind === 'directory') {
      if (walk.skipDirectories.has(entry.name) || stack.ignoresEntry(path, true) || walk.visited.has(real)) continue;
      walk.visited.add(real);
      yield* walkDirectory(walk, path, real, stack);
      continue;
    }
    if (stack.ignoresEntry(path, false)) {
      yield skipped(path, 'ignored');
      continue;
    }
    if (kind === 'other') {
      yield skipped(path, 'unreadable'); // sockets, FIFOs, devices: reading could block
      continue;
    }
    const byName = skipByName(entry.name);
    if (byName) {
      yield skipped(path, byName);
      continue;
    }
    yield await examine(walk, path, real, stats);
  }
}

async function examine(walk: Walk, path: string, real: string, known: Stats | undefined): Promise<SourceEntry> {
  const loaded = await load(walk, path, real, known);
  if ('skipped' in loaded) return loaded;
  const { text } = loaded;
  const file: SourceFile = {
    path,
    size: Buffer.byteLength(text, 'utf8'),
    hash: hashText(text),
    read: async () => {
      const again = await load(walk, path, real, undefined);
      if ('skipped' in again) throw new SkippedSourceError(path, again.skipped);
      return again.text;
    },
  };
  return file;
}

async function load(
  walk: Walk,
  path: string,
  real: string,
  known: Stats | undefined,
): Promise<{ text: string } | { path: string; skipped: SkipReason }> {
  if (known && known.size > walk.maxFileBytes) return skipped(path, 'too-large');
  // Opened without following a link and checked where it really is: a file swapped for a symlink
  // since it was listed is not read.
  const read = await readContained(walk.realRoot, real, walk.maxFileBytes);
  if ('refused' in read) return skipped(path, read.refused);
  const decoded = decodeSource(path, read.bytes);
  return 'skipped' in decoded ? skipped(path, decoded.skipped) : decoded;
}

async function resolveLink(location: string): Promise<{ real: string; stats: Stats } | undefined> {
  try {
    const real = await realpath(location);
    return { real, stats: await stat(real) };
  } catch {
    return undefined;
  }
}

function inside(root: string, real: string): boolean {
  return real === root || real.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** Ignore files are read like sources: inside the folder, not through a link, and bounded (a link to /dev/zero would never end). */
const MAX_IGNORE_FILE_BYTES = 1_000_000;

async function readRules(realRoot: string, file: string): Promise<ReturnType<typeof parseIgnoreFile>> {
  const read = await readContained(realRoot, file, MAX_IGNORE_FILE_BYTES);
  return 'bytes' in read ? parseIgnoreFile(read.bytes.toString('utf8')) : [];
}

function skipped(path: string, reason: SkipReason): { path: string; skipped: SkipReason } {
  return { path, skipped: reason };
}
