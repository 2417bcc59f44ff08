import { createHash, randomBytes } from 'node:crypto';
import { PermanentError } from '../../events/errors.ts';
import { open, seal, type SealContext } from '../platform/sealed-box.ts';

/**
 * The secret of a domain proof's one-time link: 256 random bits, URL-safe. Only its hash is stored;
 * the token itself travels sealed in `team.sso-domain-proof-requested`, for the mailer alone.
 */
export const newDomainProofToken = (): string => randomBytes(32).toString('base64url');

export const DOMAIN_PROOF_TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** How long a proof's link works: a day is enough to forward it, and short enough to be worth little if it leaks. */
export const DOMAIN_PROOF_TTL_MS = 24 * 3_600_000;

export const domainProofTokenHash = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

/** Bound to the token's hash, the workspace and the domain: a blob copied into another proof does not open. */
const contextOf = (binding: { tokenHash: string; subscriptionId: string; domain: string }): SealContext => ({
  label: 'svc.sso-domain-proof.v1',
  fields: [binding.tokenHash, binding.subscriptionId, binding.domain],
});

/** Never carries the blob or the token: the message may reach a log. */
export class DomainProofTokenDecryptionError extends PermanentError {
  constructor(reason: string) {
    super(`cannot decrypt the domain proof token: ${reason}`);
    this.name = 'DomainProofTokenDecryptionError';
  }
}

export const sealDomainProofToken = (token: string, key32: Buffer, binding: { subscriptionId: string; domain: string }): string =>
  seal(token, key32, contextOf({ tokenHash: domainProofTokenHash(token), ...binding }));

export const openDomainProofToken = (
  blob: string,
  key32: Buffer,
  binding: { tokenHash: string; subscriptionId: string; domain: string },
): string => open(blob, key32, contextOf(binding), (reason) => new DomainProofTokenDecryptionError(reason));

/** Whether a proof's link may still be confirmed (pure). */
export function confirmable(proof: { status: string; expiresAt: Date }, now: number = Date.now()): 'ok' | 'expired' | 'used' {
  if (proof.status !== 'pending') return 'used';
  return new Date(proof.expiresAt).getTime() < now ? 'expired' : 'ok';
}
