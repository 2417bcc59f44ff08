import { createHash } from 'node:crypto';

/**
 * What the sources hand to the indexer. A file carries its hash and size up front and its text on
 * demand, so the indexer can count and diff a whole project before reading any file twice and
 * without holding every file's text at once.
 */
export interface SourceFile {
  /** relative, `/` separators, no `.`/`..` segments */
  readonly path: string;
  /** UTF-8 bytes of `read()`'s text */
  readonly size: number;
  /** sha256 (hex) of the UTF-8 text, see `hashText` */
  readonly hash: string;
  /**
   * The text (BOM removed). A file on disk is read again: if it changed since it was listed, the
   * new text comes back and the indexer hashes what it indexes. Rejects with `SkippedSourceError`
   * when the file no longer passes the rules (became binary or too large meanwhile).
   */
  read(): Promise<string>;
}

/**
 * Why a candidate is not indexed:
 * - `ignored`: a `.gitignore` rule, an always-skipped directory (the contents of an ignored
 *   directory are not walked, so they are not counted one by one), or a lock file;
 * - `generated`: minified or generated (`*.min.js`, `*.map`, a generated marker in the first lines);
 * - `binary`: a NUL byte in the first 8 KB, or not valid UTF-8;
 * - `too-large`: over the size limit;
 * - `outside-root`: a symlink that resolves outside the project folder;
 * - `unreadable`: a broken symlink, a permission error, a special file;
 * - `over-budget`: reading, parsing or embedding it ran past its time or memory budget.
 */
export const SKIP_REASONS = ['ignored', 'generated', 'binary', 'too-large', 'outside-root', 'unreadable', 'over-budget'] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

export interface SkippedFile {
  readonly path: string;
  readonly skipped: SkipReason;
}

export type SourceEntry = SourceFile | SkippedFile;

export function isSkipped(entry: SourceEntry): entry is SkippedFile {
  return 'skipped' in entry;
}

export class SkippedSourceError extends Error {
  readonly path: string;
  readonly reason: SkipReason;

  constructor(path: string, reason: SkipReason) {
    super(`${path}: skipped (${reason})`);
    this.name = 'SkippedSourceError';
    this.path = path;
    this.reason = reason;
  }
}

/** The content hash the index keeps per file: sha256 of the text's UTF-8 bytes, hex. */
export function hashText(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** A source file whose text is already in memory (pushed files, tests). */
export function sourceFromText(path: string, text: string): SourceFile {
  return { path, size: Buffer.byteLength(text, 'utf8'), hash: hashText(text), read: async () => text };
}
