import { nameForMail } from '../accounts/display-name.ts';
import type { Tier } from '../kernel/tiers.ts';
import { escapeHtml } from '../platform/html-escape.ts';
import type { Mail } from './transport.ts';

/** E-mail bodies (pure). Every interpolated value is escaped in the HTML part. */

/** The link that verifies the address, and until when it works. */
export interface VerifyLink {
  url: string;
  expiresAt: Date;
}

/** With `verify` (every account since verification exists), the welcome carries the address's link. */
export function welcomeMail(user: { userId: string; email: string; name: string }, domain = 'svc.local', verify?: VerifyLink): Mail {
  const name = nameForMail(user.name);
  return {
    to: user.email,
    subject: name ? `Welcome to svc, ${name}` : 'Welcome to svc',
    messageId: `<welcome.${user.userId}@${domain}>`,
    text: `${greeting(name)}\n\nyour svc account for ${user.email} is ready. You are on the free tier; upgrade any time for the vision RAG API.\n${verify ? verifyText(verify) : ''}\n— svc\n`,
    html: `${htmlGreeting(name)}<p>your svc account for <strong>${escapeHtml(user.email)}</strong> is ready. You are on the free tier; upgrade any time for the vision RAG API.</p>${verify ? verifyHtml(verify) : ''}<p>— svc</p>`,
  };
}

// Verifying needs the account's session too: a mailbox owner who did not sign up cannot verify someone else's account by clicking.
const verifyText = (v: VerifyLink): string =>
  `\nConfirm that this address is yours (log in to the account first):\n\n    ${v.url}\n\nThe link works once, until ${formatUtcDateTime(v.expiresAt)}. ` +
  `Until you confirm, a subscription bought with this address without logging in is not linked to the account. ` +
  `If you did not sign up, ignore this e-mail.\n`;
const verifyHtml = (v: VerifyLink): string =>
  `<p>Confirm that this address is yours (log in to the account first): ${htmlLink(v.url)}</p>` +
  `<p>The link works once, until ${escapeHtml(formatUtcDateTime(v.expiresAt))}. Until you confirm, a subscription bought with this address ` +
  `without logging in is not linked to the account. If you did not sign up, ignore this e-mail.</p>`;

/** A new link asked for from the console (POST /auth/verify/resend); the earlier link no longer works. */
export function verificationMail(input: { email: string; name: string; requestId: string; verify: VerifyLink }): Mail {
  const name = nameForMail(input.name);
  return {
    to: input.email,
    subject: 'Confirm your address for svc',
    messageId: `<verification.${input.requestId}@${MESSAGE_ID_DOMAIN}>`,
    text: `${greeting(name)}\n\nhere is a new link for your svc account ${input.email}; earlier links no longer work.\n${verifyText(input.verify)}${SIGNATURE_TEXT}`,
    html: `${htmlGreeting(name)}<p>here is a new link for your svc account <strong>${escapeHtml(input.email)}</strong>; earlier links no longer work.</p>${verifyHtml(input.verify)}${SIGNATURE_HTML}`,
  };
}

const MESSAGE_ID_DOMAIN = 'svc.local';
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const TIER_NAMES: Record<Tier, string> = { free: 'Free', pro: 'Pro', team: 'Team' };

/** '21 December 2026': spelled-out month so no reader mistakes day for month; always UTC. */
export function formatUtcDate(date: Date): string {
  if (Number.isNaN(date.getTime())) throw new RangeError('formatUtcDate: invalid date');
  return `${date.getUTCDate()} ${MONTHS[date.getUTCMonth()]} ${date.getUTCFullYear()}`;
}

/** '21 December 2026, 14:05 UTC': a grace period is minutes long, so the time of day matters. */
export function formatUtcDateTime(date: Date): string {
  const hh = String(date.getUTCHours()).padStart(2, '0');
  const mm = String(date.getUTCMinutes()).padStart(2, '0');
  return `${formatUtcDate(date)}, ${hh}:${mm} UTC`;
}

/**
 * Links come from the payment provider and the configuration: anything but http(s) (javascript:,
 * data:) is refused, and the normalised href is used so no whitespace or newline rides along.
 */
export function httpUrl(value: string, field: string): string {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new Error(`${field} is not an absolute URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`${field} must be an http(s) URL`);
  return parsed.href;
}

// Names come from sign-up and from the payment provider, and old events predate sign-up's cleaning.
const greeting = (raw: string | null): string => {
  const name = nameForMail(raw);
  return name ? `Hello ${name},` : 'Hello,';
};
const htmlGreeting = (name: string | null): string => `<p>${escapeHtml(greeting(name))}</p>`;
const htmlLink = (href: string): string => `<a href="${escapeHtml(href)}">${escapeHtml(href)}</a>`;
const SIGNATURE_TEXT = '\n— svc\n';
const SIGNATURE_HTML = '<p>— svc</p>';

export interface KeyIssuedMailInput {
  email: string;
  name: string | null;
  apiKey: string;
  tier: Tier;
  subscriptionId: string;
  /** 0 for the subscription's first key, n for its n-th replacement. */
  generation?: number;
  /** The last four of the key this one replaces, when it replaces one. */
  replacesLast4?: string | null;
  /** Until when the replaced key keeps working beside this one; null or absent: it stopped at once. */
  previousValidUntil?: Date | null;
  /** When this key stops working; null or absent: never. */
  expiresAt?: Date | null;
  /** A team member's own key: the membership it belongs to. */
  membershipId?: string | null;
}

/** The only place besides the /generate response where the plaintext key is ever shown. */
export function keyIssuedMail(input: KeyIssuedMailInput): Mail {
  const tierName = TIER_NAMES[input.tier];
  const generation = input.generation ?? 0;
  const replaced =
    generation > 0
      ? `This key replaces your previous one${input.replacesLast4 ? ` (ending in ${input.replacesLast4})` : ''}, which ${
          input.previousValidUntil
            ? `keeps working until ${formatUtcDateTime(input.previousValidUntil)}, so you can switch over`
            : 'no longer works'
        }.`
      : '';
  const expiry = input.expiresAt ? `This key expires on ${formatUtcDateTime(input.expiresAt)}.` : '';
  // Shown once and never again: the way to a new key is to replace this one, not to ask for it again.
  const care =
    'Keep it secret. We store only a hash of it, so this is the only time it is shown. ' +
    'If you lose it or think someone else has it, replace it: POST /keys/rotate with {"graceSeconds": 0} and your ' +
    'account token (or this key as X-API-Key) retires it at once and e-mails you a new one.';
  if (input.membershipId) return memberKeyMail(input, input.membershipId, care);
  return {
    to: input.email,
    subject: generation > 0 ? 'Your new svc API key' : 'Your svc API key',
    // One message per key: a replacement is a new message, not a duplicate of the first.
    messageId:
      generation > 0
        ? `<key.${input.subscriptionId}.${generation}@${MESSAGE_ID_DOMAIN}>`
        : `<key.${input.subscriptionId}@${MESSAGE_ID_DOMAIN}>`,
    text:
      `${greeting(input.name)}\n\nhere is your ${generation > 0 ? 'new ' : ''}svc API key for the ${tierName} plan:\n\n    ${input.apiKey}\n\n` +
      `${replaced ? `${replaced}\n\n` : ''}${expiry ? `${expiry}\n\n` : ''}${care}\n${SIGNATURE_TEXT}`,
    html:
      `${htmlGreeting(input.name)}<p>here is your ${generation > 0 ? 'new ' : ''}svc API key for the <strong>${escapeHtml(tierName)}</strong> plan:</p>` +
      `<p><code>${escapeHtml(input.apiKey)}</code></p>` +
      `${replaced ? `<p>${escapeHtml(replaced)}</p>` : ''}${expiry ? `<p>${escapeHtml(expiry)}</p>` : ''}<p>${escapeHtml(care)}</p>${SIGNATURE_HTML}`,
  };
}

export interface InvitationMailInput {
  email: string;
  invitationId: string;
  role: 'admin' | 'member';
  /** The console's page that accepts it, with the token in its query. */
  acceptUrl: string;
  expiresAt: Date;
}

/** The only place the invitation token is ever shown: whoever holds the link (and the invited address's account) joins. */
export function invitationMail(input: InvitationMailInput): Mail {
  const as = input.role === 'admin' ? 'an admin' : 'a member';
  const until = formatUtcDateTime(input.expiresAt);
  const text =
    `Hello,\n\nyou are invited to join a team workspace on svc as ${as}. Members get their own API key under the ` +
    `team's subscription and share its collections, baselines, reports and quota.\n\nAccept (log in or sign up with ` +
    `${input.email} first):\n\n    ${input.acceptUrl}\n\nThe link works until ${until}. If you did not expect this, ignore it.\n${SIGNATURE_TEXT}`;
  const html =
    `<p>Hello,</p><p>you are invited to join a team workspace on svc as ${escapeHtml(as)}. Members get their own API key under ` +
    `the team's subscription and share its collections, baselines, reports and quota.</p>` +
    `<p>Accept (log in or sign up with <strong>${escapeHtml(input.email)}</strong> first): ${htmlLink(input.acceptUrl)}</p>` +
    `<p>The link works until ${escapeHtml(until)}. If you did not expect this, ignore it.</p>${SIGNATURE_HTML}`;
  return {
    to: input.email,
    subject: 'You are invited to a team on svc',
    messageId: `<invitation.${input.invitationId}@${MESSAGE_ID_DOMAIN}>`,
    text,
    html,
  };
}

export interface DomainProofMailInput {
  /** The address at the domain the owner named. */
  email: string;
  proofId: string;
  domain: string;
  /** Who asks: the team owner's address, so the reader knows whom the link would serve. */
  requestedByEmail: string | null;
  /** The console's page that confirms it, with the token in its query. */
  confirmUrl: string;
  expiresAt: Date;
}

/**
 * The only place a domain proof's token is ever shown. It proves the team controls the domain only
 * when its owner confirms it signed in, so the reader is told to pass it on only to that person.
 */
export function domainProofMail(input: DomainProofMailInput): Mail {
  const until = formatUtcDateTime(input.expiresAt);
  const who = input.requestedByEmail ?? 'a team owner';
  const text =
    `Hello,\n\n${who} asks to prove that their team on svc controls ${input.domain}, so that people with ` +
    `addresses at ${input.domain} sign in to svc through that team's own identity provider.\n\nIf that is right, give ` +
    `this link to them (it must be confirmed by the team's owner, signed in):\n\n    ${input.confirmUrl}\n\n` +
    `The link works once, until ${until}. If you do not know who asks, do not pass it on: ignore this e-mail.\n${SIGNATURE_TEXT}`;
  const html =
    `<p>Hello,</p><p><strong>${escapeHtml(who)}</strong> asks to prove that their team on svc controls ` +
    `<strong>${escapeHtml(input.domain)}</strong>, so that people with addresses at ${escapeHtml(input.domain)} sign in to ` +
    `svc through that team's own identity provider.</p><p>If that is right, give this link to them (it must be confirmed ` +
    `by the team's owner, signed in): ${htmlLink(input.confirmUrl)}</p><p>The link works once, until ${escapeHtml(until)}. ` +
    `If you do not know who asks, do not pass it on: ignore this e-mail.</p>${SIGNATURE_HTML}`;
  return {
    to: input.email,
    subject: `Prove ${input.domain} for single sign-on on svc`,
    messageId: `<sso-domain-proof.${input.proofId}@${MESSAGE_ID_DOMAIN}>`,
    text,
    html,
  };
}

export interface CancellationMailInput {
  email: string;
  name: string | null;
  subscriptionId: string;
  endsAt: Date;
  reactivateUrl: string;
}

export function cancellationMail(input: CancellationMailInput): Mail {
  const endsOn = formatUtcDate(input.endsAt);
  const url = httpUrl(input.reactivateUrl, 'reactivateUrl');
  return {
    to: input.email,
    subject: `Your svc subscription is cancelled and ends on ${endsOn}`,
    // endsAt is part of the id: cancelling, resuming and cancelling again is a new e-mail.
    messageId: `<cancelled.${input.subscriptionId}.${input.endsAt.getTime()}@${MESSAGE_ID_DOMAIN}>`,
    text:
      `${greeting(input.name)}\n\nyour svc subscription has been cancelled. Your paid plan and API key keep working ` +
      `until ${endsOn} (UTC); after that your key moves to the free tier.\n\n` +
      `Changed your mind? Reactivate before then: ${url}\n${SIGNATURE_TEXT}`,
    html:
      `${htmlGreeting(input.name)}<p>your svc subscription has been cancelled. Your paid plan and API key keep working ` +
      `until <strong>${escapeHtml(endsOn)}</strong> (UTC); after that your key moves to the free tier.</p>` +
      `<p>Changed your mind? Reactivate before then: ${htmlLink(url)}</p>${SIGNATURE_HTML}`,
  };
}

export interface PaymentFailedMailInput {
  email: string;
  name: string | null;
  subscriptionId: string;
  invoiceId: string;
  updatePaymentUrl: string;
}

export function paymentFailedMail(input: PaymentFailedMailInput): Mail {
  const url = httpUrl(input.updatePaymentUrl, 'updatePaymentUrl');
  return {
    to: input.email,
    subject: 'Your svc payment failed: please update your payment method',
    // One e-mail per failed invoice, however often the provider retries the webhook.
    messageId: `<payment-failed.${input.invoiceId}@${MESSAGE_ID_DOMAIN}>`,
    text:
      `${greeting(input.name)}\n\nwe could not collect the payment for your svc subscription (invoice ${input.invoiceId}). ` +
      `Please update your payment method so that your plan continues:\n\n${url}\n${SIGNATURE_TEXT}`,
    html:
      `${htmlGreeting(input.name)}<p>we could not collect the payment for your svc subscription (invoice ${escapeHtml(input.invoiceId)}). ` +
      `Please update your payment method so that your plan continues:</p><p>${htmlLink(url)}</p>${SIGNATURE_HTML}`,
  };
}

export interface SubscriptionEndedMailInput {
  email: string;
  name: string | null;
  subscriptionId: string;
  endsAt: Date;
  pricingUrl: string;
}

export function subscriptionEndedMail(input: SubscriptionEndedMailInput): Mail {
  const endedOn = formatUtcDate(input.endsAt);
  const url = httpUrl(input.pricingUrl, 'pricingUrl');
  return {
    to: input.email,
    subject: 'Your svc subscription has ended',
    messageId: `<ended.${input.subscriptionId}.${input.endsAt.getTime()}@${MESSAGE_ID_DOMAIN}>`,
    text:
      `${greeting(input.name)}\n\nyour svc subscription ended on ${endedOn} (UTC). Your API key still works, ` +
      `now on the free tier with its monthly limits.\n\nUpgrade again any time: ${url}\n${SIGNATURE_TEXT}`,
    html:
      `${htmlGreeting(input.name)}<p>your svc subscription ended on <strong>${escapeHtml(endedOn)}</strong> (UTC). ` +
      `Your API key still works, now on the free tier with its monthly limits.</p>` +
      `<p>Upgrade again any time: ${htmlLink(url)}</p>${SIGNATURE_HTML}`,
  };
}

/** A team member's own key: theirs to use, under the team's subscription and quota, until they leave. */
function memberKeyMail(input: KeyIssuedMailInput, membershipId: string, care: string): Mail {
  const about =
    "It is your own key for the team workspace you joined: it uses the team's Team plan, its collections and its " +
    'shared monthly quota, and it stops working if you leave the team or are removed from it.';
  return {
    to: input.email,
    subject: 'Your svc API key for your team',
    messageId: `<member-key.${membershipId}@${MESSAGE_ID_DOMAIN}>`,
    text: `${greeting(input.name)}\n\nhere is your svc API key:\n\n    ${input.apiKey}\n\n${about}\n\n${care}\n${SIGNATURE_TEXT}`,
    html: `${htmlGreeting(input.name)}<p>here is your svc API key:</p><p><code>${escapeHtml(input.apiKey)}</code></p><p>${escapeHtml(about)}</p><p>${escapeHtml(care)}</p>${SIGNATURE_HTML}`,
  };
}
