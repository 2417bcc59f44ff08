import { createHash, randomBytes } from 'node:crypto';
import { decryptKey, encryptKey } from '../keys/key-crypto.ts';

/** The secret of an invitation link: 256 random bits, URL-safe. */
export const newInvitationToken = (): string => randomBytes(32).toString('base64url');

export const INVITATION_TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** What the workspace stores and looks the token up by: the token itself is only in the e-mail. */
export const invitationTokenHash = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

/**
 * The token in its event, for the mailer: AES-256-GCM under KEY_ENCRYPTION_KEY, bound to the
 * token's hash and the workspace, as API keys are (key-crypto.ts), so it opens in its own event only.
 */
export const encryptInvitationToken = (token: string, key32: Buffer, subscriptionId: string): string =>
  encryptKey(token, key32, { keyHash: invitationTokenHash(token), subscriptionId });

export const decryptInvitationToken = (blob: string, key32: Buffer, binding: { tokenHash: string; subscriptionId: string }): string =>
  decryptKey(blob, key32, { keyHash: binding.tokenHash, subscriptionId: binding.subscriptionId });

/** Whether an invitation can still be accepted (pure): pending and not past its expiry. */
export function acceptable(invitation: { status: string; expiresAt: Date }, now: number = Date.now()): 'ok' | 'expired' | 'used' {
  if (invitation.status !== 'pending') return 'used';
  return new Date(invitation.expiresAt).getTime() < now ? 'expired' : 'ok';
}
