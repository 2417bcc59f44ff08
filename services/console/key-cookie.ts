import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * The customer's API key, sealed for the `svc_key` cookie.
 *
 * *Choice:* the rag routes and GET /usage take the API key, not the account's session, and the
 * key is stored only as a hash, so the console cannot look it up. The customer pastes it once
 * (from the e-mail it came in); the console keeps it in an `HttpOnly; Secure; SameSite=Strict`
 * cookie, encrypted with AES-256-GCM under a key derived (HKDF) from CONSOLE_SECRET, with the
 * account id as additional data: page scripts never see it, the browser's disk holds only
 * ciphertext, a cookie moved to another account's session does not open, and the server keeps
 * nothing, so any console replica serves any customer. Pages show its last four characters only.
 */

const VERSION = 'k1';

function sealingKey(secret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'svc-console', 'api-key cookie', 32));
}

/** `k1.` + base64url(iv | tag | ciphertext). */
export function sealKey(secret: string, accountId: string, apiKey: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(secret), iv);
  cipher.setAAD(Buffer.from(accountId, 'utf8'));
  const body = Buffer.concat([cipher.update(apiKey, 'utf8'), cipher.final()]);
  return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
}

/** The key a cookie holds for this account, or null when it is not one this console sealed for it. */
export function openKey(secret: string, accountId: string, sealed: string | undefined): string | null {
  if (!sealed?.startsWith(`${VERSION}.`)) return null;
  const raw = Buffer.from(sealed.slice(VERSION.length + 1), 'base64url');
  if (raw.length < 12 + 16 + 1) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', sealingKey(secret), raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(accountId, 'utf8'));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}
