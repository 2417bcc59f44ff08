import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { PermanentError } from '../../events/errors.ts';
import { open, seal, type SealContext } from '../platform/sealed-box.ts';
import { keysEqualConstantTime } from '../platform/secrets.ts';
import type { EmailVerificationLink } from './events.ts';

/**
 * The link that verifies an account's address (pure apart from randomness). Its secret is 256
 * random bits; the account store keeps only its SHA-256, one at a time (a new link replaces the
 * last), and the secret reaches the mailer only sealed in the event (account.registered v2 for the
 * welcome e-mail, account.verification-requested for a resend).
 */

/** How long a link works: two days, enough for a weekend's unread mail, short for a leaked one. */
export const VERIFICATION_TTL_MS = 48 * 60 * 60 * 1000;

export const VERIFICATION_TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** What the account store keeps of a link: never the secret itself. */
export interface StoredVerification {
  tokenHash: string;
  requestId: string;
  expiresAt: Date;
}

export interface IssuedVerification {
  stored: StoredVerification;
  /** For the event: the secret sealed for the mailer. */
  link: EmailVerificationLink;
}

export const verificationTokenHash = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

/** The sealed blob opens only in an event naming this address and this request. */
const sealContext = (binding: { email: string; requestId: string }): SealContext => ({
  label: 'svc/email-verification/v1',
  fields: [binding.email, binding.requestId],
});

/** A new link for `email`: its secret sealed for the mailer, its hash for the store. */
export function issueVerification(keyEncryptionKey: Buffer, email: string, now: Date = new Date()): IssuedVerification {
  const token = randomBytes(32).toString('base64url');
  const requestId = randomUUID();
  const expiresAt = new Date(now.getTime() + VERIFICATION_TTL_MS);
  return {
    stored: { tokenHash: verificationTokenHash(token), requestId, expiresAt },
    link: { requestId, encryptedToken: seal(token, keyEncryptionKey, sealContext({ email, requestId })), expiresAt },
  };
}

/** Permanent: the mailer dead-letters the event (logged without the blob) instead of retrying it. */
export class VerificationLinkError extends PermanentError {
  constructor(reason: string) {
    super(`the verification link's secret does not open: ${reason}`);
    this.name = 'VerificationLinkError';
  }
}

/** The mailer's side: the secret out of its event, for the one e-mail that carries it. */
export function openVerificationToken(link: EmailVerificationLink, keyEncryptionKey: Buffer, email: string): string {
  const token = open(
    link.encryptedToken,
    keyEncryptionKey,
    sealContext({ email, requestId: link.requestId }),
    (reason) => new VerificationLinkError(reason),
  );
  if (!VERIFICATION_TOKEN.test(token)) throw new VerificationLinkError('not a verification token');
  return token;
}

/**
 * Whether `token` verifies an account holding `stored` (pure): 'ok', 'expired' (the account's own
 * current link, too late), or 'invalid' (no link, another link, a used one or a forged one: one
 * answer, so a refusal says nothing of what the account holds). Compared in constant time.
 */
export function checkVerification(
  stored: StoredVerification | null | undefined,
  token: string,
  now: Date = new Date(),
): 'ok' | 'expired' | 'invalid' {
  if (!stored || !VERIFICATION_TOKEN.test(token)) return 'invalid';
  if (!keysEqualConstantTime(verificationTokenHash(token), stored.tokenHash)) return 'invalid';
  return new Date(stored.expiresAt).getTime() <= now.getTime() ? 'expired' : 'ok';
}
