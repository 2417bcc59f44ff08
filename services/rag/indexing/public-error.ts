import { posix } from 'node:path';

/** The most an index job's error may say: enough to act on, never a dump. */
export const PUBLIC_ERROR_MAX = 500;

const FALLBACK = 'indexing failed';
const SERVER_PATH = '<server path>';

/**
 * An absolute POSIX path (or file:// URL) standing on its own: not the `//host/…` of a URL (after a
 * colon), not the tail of a relative path or a fraction (after a word character, a dot or a slash).
 * Quotes, brackets and whitespace end it, as they do in Node's and the libraries' messages.
 */
const ABSOLUTE_PATH = /(?<![\w.:/~-])(?:file:\/\/)?\/[^\s'"`()<>[\]{},;]+/g;

/** Stack frames some libraries put into a message itself. */
const STACK_FRAME = /^\s+at\s.*$/gm;

const ERRNO_CODE = /^E[A-Z0-9]{2,}$/;

/**
 * What an index job may tell the customer about why it failed: the error's message (never its
 * stack), with every absolute path of this server made relative to the hidden root it lies under
 * (`/srv/projects/shop/src/a.ts` with root `/srv/projects` reads `shop/src/a.ts`) or, outside them
 * all, `<server path>`; the errno code (ENOENT, EACCES…) kept, since it says what kind of failure
 * it was; at most PUBLIC_ERROR_MAX characters.
 */
export function publicJobError(err: unknown, hide: readonly string[]): string {
  const roots = hide.filter((root) => root.startsWith('/')).map((root) => withoutTrailingSlash(posix.normalize(root)));
  // Longest first: a path under a nested root is told relative to the closest one.
  roots.sort((a, b) => b.length - a.length);
  const { message, code } = partsOf(err);
  let text = message.replace(STACK_FRAME, '').trim();
  text = text.replace(ABSOLUTE_PATH, (match) => {
    const trailing = /[.:]+$/.exec(match)?.[0] ?? '';
    return publicPath(match.slice(0, match.length - trailing.length), roots) + trailing;
  });
  if (code !== undefined && !text.includes(code)) text = text === '' ? code : `${code}: ${text}`;
  if (text === '') text = FALLBACK;
  return text.length <= PUBLIC_ERROR_MAX ? text : `${text.slice(0, PUBLIC_ERROR_MAX - 1)}…`;
}

function partsOf(err: unknown): { message: string; code: string | undefined } {
  if (typeof err === 'string') return { message: err, code: undefined };
  if (err === null || typeof err !== 'object') return { message: err === undefined ? '' : String(err), code: undefined };
  const { message, code } = err as { message?: unknown; code?: unknown };
  return {
    message: typeof message === 'string' ? message : '',
    code: typeof code === 'string' && ERRNO_CODE.test(code) ? code : undefined,
  };
}

function publicPath(found: string, roots: readonly string[]): string {
  const path = posix.normalize(found.startsWith('file://') ? safeDecode(found.slice('file://'.length)) : found);
  for (const root of roots) {
    if (root === '/') return SERVER_PATH; // a root of everything hides nothing
    if (path === root) return '.';
    if (path.startsWith(`${root}/`)) return path.slice(root.length + 1) || '.';
  }
  return SERVER_PATH;
}

function withoutTrailingSlash(path: string): string {
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

function safeDecode(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
