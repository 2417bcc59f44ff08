import { createHash, randomBytes } from 'node:crypto';

/**
 * Ties a single sign-on to the browser that started it on the console (pure). Starting sets a random
 * secret in the cookie `svc_sso_binding` and sends only its SHA-256 to the accounts service, which
 * keeps it with the flow and the one-time code; finishing (/sso/complete) sends the secret with the
 * code, and the code opens a session only with it. So a code issued to someone else's sign-on, sent
 * to a victim as a link, cannot sign the victim's browser into that account (login CSRF).
 *
 * The cookie is `HttpOnly; Secure; SameSite=Lax` on /sso/complete only, ten minutes: the provider's
 * redirect back is a chain from another site, which a Strict cookie would not follow.
 */

export const BINDING_COOKIE = 'svc_sso_binding';
const PATH = '/sso/complete';
const SHAPE = /^[\w-]{43}$/;

export const newBindingSecret = (): string => randomBytes(32).toString('base64url');

/** What the accounts service is given: the secret's SHA-256, base64url. */
export const bindingHashOf = (secret: string): string => createHash('sha256').update(secret).digest('base64url');

/** A cookie value that can be a binding secret (anything else is not sent on). */
export const isBindingSecret = (value: string | undefined): value is string => value !== undefined && SHAPE.test(value);

export const bindingCookie = (value: string, maxAgeSeconds: number): string => flowCookie(BINDING_COOKIE, value, maxAgeSeconds);

/** A cookie of the sign-on's return leg: on /sso/complete only, and sent on the provider's cross-site redirect back (Lax). */
function flowCookie(name: string, value: string, maxAgeSeconds: number): string {
  return [
    `${name}=${value}`,
    `Path=${PATH}`,
    'HttpOnly',
    'Secure',
    'SameSite=Lax',
    `Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`,
  ].join('; ');
}

/**
 * Where the console goes on to once the sign-on is done (a consent page the log-in interrupted, say):
 * kept beside the binding, on /sso/complete only, for as long, and read through safeNext again there.
 */
export const NEXT_COOKIE = 'svc_sso_next';

export const nextCookie = (value: string, maxAgeSeconds: number): string =>
  flowCookie(NEXT_COOKIE, encodeURIComponent(value), maxAgeSeconds);
