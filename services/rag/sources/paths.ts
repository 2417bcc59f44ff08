/**
 * Paths a client sends are untrusted: they name rows in the index and come back in answers, and a
 * later version may write them to disk. Only plain relative paths inside the collection are taken.
 */

export type InvalidPathReason = 'empty' | 'absolute' | 'parent-segment' | 'control-character' | 'directory' | 'too-long' | 'duplicate';

export class InvalidSourcePathError extends Error {
  readonly path: string;
  readonly reason: InvalidPathReason;

  constructor(path: string, reason: InvalidPathReason) {
    super(`invalid source path ${JSON.stringify(path.length > 200 ? `${path.slice(0, 200)}...` : path)}: ${describe(reason)}`);
    this.name = 'InvalidSourcePathError';
    this.path = path;
    this.reason = reason;
  }
}

/** Longer paths exceed what file systems and editors handle; no real source tree has one. */
export const MAX_PATH_LENGTH = 1024;

/**
 * `src\\a.ts`, `./src//a.ts` -> `src/a.ts`. Throws `InvalidSourcePathError` for an empty path, an
 * absolute one (`/x`, `C:\\x`, `C:x`, `\\\\server\\x`), a `..` segment anywhere, control characters
 * (NUL included) or a trailing `/`. Backslashes are taken as separators: clients on Windows send them,
 * and a backslash inside a real file name is too rare to be worth the ambiguity.
 */
export function normalizeSourcePath(raw: string): string {
  if (raw.length === 0) throw new InvalidSourcePathError(raw, 'empty');
  if (raw.length > MAX_PATH_LENGTH) throw new InvalidSourcePathError(raw, 'too-long');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(raw)) throw new InvalidSourcePathError(raw, 'control-character');
  const slashed = raw.replaceAll('\\', '/');
  if (slashed.startsWith('/') || /^[A-Za-z]:/.test(slashed)) throw new InvalidSourcePathError(raw, 'absolute');
  if (slashed.endsWith('/')) throw new InvalidSourcePathError(raw, 'directory');
  const segments: string[] = [];
  for (const segment of slashed.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') throw new InvalidSourcePathError(raw, 'parent-segment');
    segments.push(segment);
  }
  if (segments.length === 0) throw new InvalidSourcePathError(raw, 'empty');
  return segments.join('/');
}

function describe(reason: InvalidPathReason): string {
  switch (reason) {
    case 'empty':
      return 'empty';
    case 'absolute':
      return 'must be relative';
    case 'parent-segment':
      return 'must not contain ".."';
    case 'control-character':
      return 'contains a control character';
    case 'directory':
      return 'names a directory (trailing "/")';
    case 'too-long':
      return `longer than ${MAX_PATH_LENGTH} characters`;
    case 'duplicate':
      return 'given twice';
  }
}
