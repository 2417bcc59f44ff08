/**
 * Where a log-in or sign-up goes on to (pure): a path of the console itself, or null. The value comes
 * from a form or a query anyone can craft, so anything that a browser could read as another origin
 * (`//host`, `/\host`, `https://host`, a tab or newline the URL parser drops) is refused: no open
 * redirect. The answer is the path and query as the URL parser normalised them, without a fragment.
 */
const BASE = 'https://console.invalid';
const MAX_LENGTH = 2048;

export function safeNext(value: unknown): string | null {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_LENGTH) return null;
  // Only a path; no backslash (browsers read it as a slash), no control characters or spaces.
  if (!value.startsWith('/') || value.startsWith('//') || /[\\\s\u0000-\u001f\u007f]/.test(value)) return null;
  let url: URL;
  try {
    url = new URL(value, BASE);
  } catch {
    return null;
  }
  if (url.origin !== BASE) return null;
  const path = `${url.pathname}${url.search}`;
  return path.startsWith('/') && !path.startsWith('//') ? path : null;
}
