import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * What a single sign-on flow must remember between sending the browser to the provider and its
 * return (pure): the PKCE verifier, state, nonce and which workspace it is for. *Choice:* none of it
 * stays in the process; it travels in the browser's cookie `svc_sso_flow`, sealed with AES-256-GCM
 * under a key derived (HKDF) from JWT_SECRET, so any accounts replica finishes a flow another began,
 * and the browser holds only ciphertext it can neither read nor alter. The cookie is `HttpOnly;
 * Secure; SameSite=Lax` (the provider's redirect back is a cross-site top-level GET, which Lax lets
 * through and Strict would not), scoped to the callback's path, and lives ten minutes; the callback
 * deletes it whatever the outcome, so a flow is finished once.
 */

export const FLOW_COOKIE = 'svc_sso_flow';
export const FLOW_COOKIE_PATH = '/auth/sso/callback';
export const FLOW_TTL_MS = 10 * 60 * 1000;

const VERSION = 'f1';
const AAD = Buffer.from('svc.sso-flow.v1', 'utf8');

export interface SsoFlow {
  subscriptionId: string;
  codeVerifier: string;
  state: string;
  nonce: string;
  /**
   * SHA-256 (base64url) of the secret the console keeps in its own cookie for this sign-on: the code
   * the flow ends with opens a session only for a browser holding that secret (see one-time-codes.ts).
   */
  binding: string;
  /** When the flow stops being accepted (ms since the epoch). */
  expiresAt: number;
  /**
   * A link, not a sign-on: the logged-in account it was started for (from the link ticket) and its
   * token version then. The flow ends with a code that records the identity on this account only.
   */
  link?: { userId: string; tokenVersion: number };
}

function sealingKey(jwtSecret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', jwtSecret, 'svc-accounts', 'sso flow cookie', 32));
}

/** `f1.` + base64url(iv | tag | ciphertext of the flow's JSON). */
export function sealFlow(jwtSecret: string, flow: SsoFlow): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(jwtSecret), iv);
  cipher.setAAD(AAD);
  const body = Buffer.concat([cipher.update(JSON.stringify(flow), 'utf8'), cipher.final()]);
  return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
}

/** The flow a cookie holds, or null when it is not one this deployment sealed, is malformed, or has expired. */
export function openFlow(jwtSecret: string, sealed: string | undefined, now = Date.now()): SsoFlow | null {
  if (!sealed?.startsWith(`${VERSION}.`)) return null;
  const raw = Buffer.from(sealed.slice(VERSION.length + 1), 'base64url');
  if (raw.length < 12 + 16 + 2) return null;
  let flow: unknown;
  try {
    const decipher = createDecipheriv('aes-256-gcm', sealingKey(jwtSecret), raw.subarray(0, 12));
    decipher.setAAD(AAD);
    decipher.setAuthTag(raw.subarray(12, 28));
    flow = JSON.parse(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8'));
  } catch {
    return null;
  }
  if (!isFlow(flow) || flow.expiresAt <= now) return null;
  return flow;
}

function isFlow(value: unknown): value is SsoFlow {
  if (typeof value !== 'object' || value === null) return false;
  const f = value as Record<string, unknown>;
  return (
    typeof f.subscriptionId === 'string' &&
    typeof f.codeVerifier === 'string' &&
    typeof f.state === 'string' &&
    typeof f.nonce === 'string' &&
    typeof f.binding === 'string' &&
    typeof f.expiresAt === 'number' &&
    (f.link === undefined || isLink(f.link))
  );
}

function isLink(value: unknown): value is SsoFlow['link'] {
  if (typeof value !== 'object' || value === null) return false;
  const l = value as Record<string, unknown>;
  return typeof l.userId === 'string' && typeof l.tokenVersion === 'number';
}

/** The Set-Cookie value carrying a sealed flow (or deleting it, with an empty value and maxAgeSeconds 0). */
export function flowCookieHeader(value: string, maxAgeSeconds: number): string {
  return [
    `${FLOW_COOKIE}=${value}`,
    `Path=${FLOW_COOKIE_PATH}`,
    'HttpOnly',
    'Secure',
    'SameSite=Lax',
    `Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`,
  ].join('; ');
}
