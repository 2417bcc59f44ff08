import { openVerificationToken } from '../accounts/email-verification.ts';
import type { AccountRegistered, AccountVerificationRequested, EmailVerificationLink } from '../accounts/events.ts';
import type { SubscriptionCancelled, SubscriptionEnded, SubscriptionPaymentFailed } from '../billing/events.ts';
import type { KeyGenerated } from '../keys/events.ts';
import type { TeamMemberInvited, TeamSsoDomainProofRequested } from '../teams/events.ts';
import { decryptInvitationToken, invitationTokenHash } from '../teams/invitation-token.ts';
import { DomainProofTokenDecryptionError, domainProofTokenHash, openDomainProofToken } from '../teams/sso-domain-proof-token.ts';
import { decryptKey, KeyDecryptionError } from '../keys/key-crypto.ts';
import { hashKey } from '../keys/key-format.ts';
import {
  cancellationMail,
  domainProofMail,
  invitationMail,
  keyIssuedMail,
  paymentFailedMail,
  subscriptionEndedMail,
  verificationMail,
  welcomeMail,
  type VerifyLink,
} from './templates.ts';
import type { Mail } from './transport.ts';

export interface OwedMail {
  /** The effect id: one e-mail per id, ever. */
  effect: string;
  mail: Mail;
}

export interface MailSettings {
  keyEncryptionKey: Buffer;
  reactivateUrl: string;
  pricingUrl: string;
  /** The console's public URL: invitation links point at its /team/join page. */
  consoleUrl: string;
}

/** The events that can owe someone an e-mail (other contexts' published events). */
export type MailEvent =
  | AccountRegistered
  | AccountVerificationRequested
  | KeyGenerated
  | SubscriptionCancelled
  | SubscriptionPaymentFailed
  | SubscriptionEnded
  | TeamMemberInvited
  | TeamSsoDomainProofRequested;

export const MAIL_EVENT_TYPES: readonly MailEvent['type'][] = [
  'account.registered',
  'account.verification-requested',
  'key.generated',
  'subscription.cancelled',
  'subscription.payment-failed',
  'subscription.ended',
  'team.member-invited',
  'team.sso-domain-proof-requested',
];

/** Which e-mail, if any, an event owes someone. Pure apart from decrypting the key for its one e-mail. */
export function owedMail(event: MailEvent, settings: MailSettings): OwedMail | null {
  switch (event.type) {
    case 'account.registered': {
      const d = event.data;
      const verify = d.verification ? verifyLink(d.verification, d.email, settings) : undefined;
      return { effect: `welcome-email:${d.userId}`, mail: welcomeMail(d, undefined, verify) };
    }
    case 'account.verification-requested': {
      const d = event.data;
      return {
        effect: `verification-email:${d.requestId}`,
        mail: verificationMail({ email: d.email, name: d.name, requestId: d.requestId, verify: verifyLink(d, d.email, settings) }),
      };
    }
    case 'key.generated': {
      const d = event.data;
      // A key made through POST /generate is shown in that response; subscription and rotated keys are mailed.
      if (d.source === 'api') return null;
      const apiKey = decryptKey(d.encryptedKey, settings.keyEncryptionKey, { keyHash: d.keyHash, subscriptionId: d.subscriptionId });
      // Blobs from before the binding decrypt in any event: only the key the event names goes to its address.
      // Permanent, so the consumer logs it (without the key) and dead-letters the event instead of sending.
      if (hashKey(apiKey) !== d.keyHash) throw new KeyDecryptionError("the key does not match the event's key hash");
      return {
        effect: `key-email:${d.keyHash}`,
        mail: keyIssuedMail({
          email: d.email,
          name: null,
          apiKey,
          tier: d.tier,
          subscriptionId: d.subscriptionId,
          generation: d.generation,
          replacesLast4: d.replacesLast4,
          previousValidUntil: d.previousValidUntil ?? null,
          expiresAt: d.expiresAt ?? null,
          membershipId: d.source === 'member' ? (d.membershipId ?? null) : null,
        }),
      };
    }
    case 'team.member-invited': {
      const d = event.data;
      const token = decryptInvitationToken(d.encryptedToken, settings.keyEncryptionKey, {
        tokenHash: d.tokenHash,
        subscriptionId: d.subscriptionId,
      });
      if (invitationTokenHash(token) !== d.tokenHash) throw new KeyDecryptionError("the token does not match the event's token hash");
      const acceptUrl = new URL('/team/join', settings.consoleUrl);
      acceptUrl.searchParams.set('token', token);
      return {
        effect: `invitation-email:${d.invitationId}`,
        mail: invitationMail({
          email: d.email,
          invitationId: d.invitationId,
          role: d.role,
          acceptUrl: acceptUrl.href,
          expiresAt: d.expiresAt,
        }),
      };
    }
    case 'team.sso-domain-proof-requested': {
      const d = event.data;
      const binding = { tokenHash: d.tokenHash, subscriptionId: d.subscriptionId, domain: d.domain };
      const token = openDomainProofToken(d.encryptedToken, settings.keyEncryptionKey, binding);
      if (domainProofTokenHash(token) !== d.tokenHash)
        throw new DomainProofTokenDecryptionError("the token does not match the event's token hash");
      const confirmUrl = new URL('/team/sso/verify', settings.consoleUrl);
      confirmUrl.searchParams.set('token', token);
      return {
        effect: `sso-domain-proof-email:${d.proofId}`,
        mail: domainProofMail({
          email: d.address,
          proofId: d.proofId,
          domain: d.domain,
          requestedByEmail: d.requestedByEmail,
          confirmUrl: confirmUrl.href,
          expiresAt: d.expiresAt,
        }),
      };
    }
    case 'subscription.cancelled': {
      const d = event.data;
      return {
        effect: `cancellation-email:${d.subscriptionId}:${d.endsAt.getTime()}`,
        mail: cancellationMail({
          email: d.email,
          name: d.name,
          subscriptionId: d.subscriptionId,
          endsAt: d.endsAt,
          reactivateUrl: httpOr(d.reactivateUrl, settings.reactivateUrl),
        }),
      };
    }
    case 'subscription.payment-failed': {
      const d = event.data;
      return {
        effect: `payment-failed-email:${d.invoiceId}`,
        mail: paymentFailedMail({
          email: d.email,
          name: d.name,
          subscriptionId: d.subscriptionId,
          invoiceId: d.invoiceId,
          updatePaymentUrl: httpOr(d.updatePaymentUrl, settings.reactivateUrl),
        }),
      };
    }
    case 'subscription.ended': {
      const d = event.data;
      if (!d.email) return null;
      return {
        effect: `ended-email:${d.subscriptionId}:${d.endsAt.getTime()}`,
        mail: subscriptionEndedMail({
          email: d.email,
          name: d.name,
          subscriptionId: d.subscriptionId,
          endsAt: d.endsAt,
          pricingUrl: settings.pricingUrl,
        }),
      };
    }
    default: {
      const unhandled: never = event;
      throw new Error(`no e-mail defined for ${(unhandled as { type: string }).type}`);
    }
  }
}

/** The console's page for an address's link: its secret opened from the event, for this e-mail only. */
function verifyLink(link: EmailVerificationLink, email: string, settings: MailSettings): VerifyLink {
  const url = new URL('/verify', settings.consoleUrl);
  url.searchParams.set('token', openVerificationToken(link, settings.keyEncryptionKey, email));
  return { url: url.href, expiresAt: link.expiresAt };
}

/** The provider's link when it is a web link, else ours. */
function httpOr(provided: string | null, fallback: string): string {
  return provided && /^https?:\/\//i.test(provided) ? provided : fallback;
}
