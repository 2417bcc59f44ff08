/**
 * Files a client sends instead of a folder: the same rules as the walker (always-skipped
 * directories, the `.gitignore` files among the pushed ones, lock and generated files, binaries,
 * the size limit), after the paths have been checked and normalised.
 */

import { IgnoreStack, parseIgnoreFile } from './gitignore.ts';
import { InvalidSourcePathError, normalizeSourcePath } from './paths.ts';
import {
  checkText,
  DEFAULT_MAX_FILE_BYTES,
  DEFAULT_SKIPPED_DIRECTORIES,
  decodeSource,
  inSkippedDirectory,
  skipByName,
} from './skip-rules.ts';
import { sourceFromText } from './source-file.ts';
import type { SkipReason, SourceEntry } from './source-file.ts';

export interface PushedFile {
  readonly path: string;
  /** text, or raw bytes (checked for NULs and decoded as UTF-8 like a file on disk) */
  readonly content: string | Uint8Array;
}

export interface PushOptions {
  readonly maxFileBytes?: number;
  readonly skipDirectories?: readonly string[];
  readonly ignorePatterns?: readonly string[];
  /** apply `.gitignore` files that are among the pushed files (default true) */
  readonly gitignore?: boolean;
}

/**
 * The entries for a push, sorted by path. Throws `InvalidSourcePathError` (nothing is taken) when
 * any path is absolute, has a `..` segment, is empty, or when two paths normalise to the same one.
 */
export function readPushedFiles(files: readonly PushedFile[], options: PushOptions = {}): SourceEntry[] {
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const skipDirectories = new Set(options.skipDirectories ?? DEFAULT_SKIPPED_DIRECTORIES);
  const byPath = new Map<string, PushedFile>();
  for (const file of files) {
    const path = normalizeSourcePath(file.path);
    if (byPath.has(path)) throw new InvalidSourcePathError(file.path, 'duplicate');
    byPath.set(path, file);
  }
  const paths = [...byPath.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const stack = ignoreStackOf(byPath, paths, options);
  const entries: SourceEntry[] = [];
  for (const path of paths) {
    const reason = skipReason(path, byPath.get(path) as PushedFile, stack, skipDirectories, maxFileBytes);
    if (typeof reason === 'string') entries.push({ path, skipped: reason });
    else entries.push(sourceFromText(path, reason.text));
  }
  return entries;
}

function skipReason(
  path: string,
  file: PushedFile,
  stack: IgnoreStack,
  skipDirectories: ReadonlySet<string>,
  maxFileBytes: number,
): SkipReason | { text: string } {
  if (inSkippedDirectory(path, skipDirectories) || stack.ignores(path, false)) return 'ignored';
  const byName = skipByName(path.slice(path.lastIndexOf('/') + 1));
  if (byName) return byName;
  const bytes = typeof file.content === 'string' ? Buffer.byteLength(file.content, 'utf8') : file.content.byteLength;
  if (bytes > maxFileBytes) return 'too-large';
  if (typeof file.content !== 'string') {
    const decoded = decodeSource(path, file.content);
    return 'skipped' in decoded ? decoded.skipped : decoded;
  }
  // A string that came from a decoder keeps a BOM as U+FEFF; a file read from disk loses it.
  const text = file.content.startsWith('\uFEFF') ? file.content.slice(1) : file.content;
  return checkText(path, text) ?? { text };
}

/** `.gitignore` files among the pushed ones, each applying to its own directory. */
function ignoreStackOf(byPath: ReadonlyMap<string, PushedFile>, paths: readonly string[], options: PushOptions): IgnoreStack {
  const levels: Array<{ base: string; rules: ReturnType<typeof parseIgnoreFile> }> = [];
  if (options.ignorePatterns?.length) levels.push({ base: '', rules: parseIgnoreFile(options.ignorePatterns.join('\n')) });
  if (options.gitignore ?? true) {
    const ignoreFiles = paths.filter((p) => p === '.gitignore' || p.endsWith('/.gitignore'));
    // Shallower first: the stack lets deeper files override.
    ignoreFiles.sort((a, b) => a.split('/').length - b.split('/').length || (a < b ? -1 : 1));
    for (const path of ignoreFiles) {
      const content = (byPath.get(path) as PushedFile).content;
      const text = typeof content === 'string' ? content : new TextDecoder().decode(content);
      levels.push({ base: path.slice(0, Math.max(0, path.lastIndexOf('/'))), rules: parseIgnoreFile(text) });
    }
  }
  return new IgnoreStack(levels);
}
