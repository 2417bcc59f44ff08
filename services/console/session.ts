import { createHmac, randomBytes } from 'node:crypto';
import { keysEqualConstantTime } from '../platform/secrets.ts';

/**
 * The console's cookies and CSRF tokens (pure).
 *
 * The session is the account token of POST /auth/login or /auth/signup, kept as it is in a cookie
 * page scripts cannot read (`HttpOnly`), sent only over HTTPS (`Secure`; Chromium and Firefox accept
 * it on http://localhost) and never on a request another site starts (`SameSite=Strict`). It has no
 * Max-Age: it ends with the browser session, and the token's own expiry (7 days) and a password
 * change end it sooner, since every page asks GET /auth/me with it.
 *
 * CSRF: every form carries a synchronizer token, HMAC-SHA256(CONSOLE_SECRET, purpose + session),
 * compared in constant time. Before sign-in (the log-in and sign-up forms, where a forged log-in
 * would sign the victim into the attacker's account) the session is a random pre-session cookie
 * set with the form.
 */

export const SESSION_COOKIE = 'svc_session';
export const PRE_SESSION_COOKIE = 'svc_presession';
export const KEY_COOKIE = 'svc_key';

export interface CookieOptions {
  /** Seconds; undefined: a browser-session cookie; 0: delete it. */
  maxAge?: number;
}

/** A Set-Cookie value with the console's attributes, always HttpOnly, Secure, SameSite=Strict, Path=/. */
export function cookieHeader(name: string, value: string, options: CookieOptions = {}): string {
  if (!/^[\w.-]+$/.test(name)) throw new Error(`cookie name ${name} is not a token`);
  if (!/^[\w.~+/=-]*$/.test(value)) throw new Error('cookie value holds characters a cookie may not');
  const parts = [`${name}=${value}`, 'Path=/', 'HttpOnly', 'Secure', 'SameSite=Strict'];
  if (options.maxAge !== undefined) parts.push(`Max-Age=${Math.max(0, Math.floor(options.maxAge))}`);
  return parts.join('; ');
}

/** Deletes a cookie the console set. */
export const clearedCookie = (name: string): string => cookieHeader(name, '', { maxAge: 0 });

/** The cookies of a request's Cookie header, first occurrence winning. */
export function readCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const pair of (header ?? '').split(';')) {
    const at = pair.indexOf('=');
    const name = pair.slice(0, Math.max(0, at)).trim();
    if (name !== '' && !cookies.has(name)) cookies.set(name, pair.slice(at + 1).trim());
  }
  return cookies;
}

/** A new pre-session value: 24 random bytes. */
export const newPreSession = (): string => randomBytes(24).toString('base64url');

/** The CSRF token of a session (or pre-session): derived, so nothing is stored. */
export function csrfToken(secret: string, session: string): string {
  return createHmac('sha256', secret).update('svc-console csrf\u0000').update(session).digest('base64url');
}

/** Whether a submitted token is the session's; false for a missing session or token. */
export function csrfValid(secret: string, session: string | undefined, submitted: unknown): boolean {
  if (!session || typeof submitted !== 'string' || submitted.length === 0) return false;
  return keysEqualConstantTime(submitted, csrfToken(secret, session));
}
