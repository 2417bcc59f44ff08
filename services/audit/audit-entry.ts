import type { AccountEvent } from '../accounts/events.ts';
import { SUBSCRIPTION_EVENT_TYPES, type SubscriptionEvent } from '../billing/events.ts';
import type { KeyCheckRefused, KeyEvent } from '../keys/events.ts';
import type { ActedBy, CollectionConfigured, CollectionDeleted, IndexRequested } from '../rag/events.ts';
import { TEAM_EVENT_TYPES, type TeamEvent } from '../teams/events.ts';

/**
 * One line of a team's audit log, made from one event the log already holds. Pure: the live
 * projection and a replay make the same entries from the same events.
 *
 * Who an entry belongs to is what its event names: the subscription (keys, billing), the account
 * (log-ins, passwords) or the customer (collections); a team's log is the entries of its
 * subscription, its owner's account and its customer id. Nothing secret is kept: keys appear by
 * their last four characters or the first 12 hex digits of their hash, never by value.
 */
export interface AuditEntry {
  entryId: string;
  at: Date;
  /** What happened, in the log's own words (the event type, or key.rotated for a rotation's key). */
  action: string;
  /**
   * Who did it: `account:<userId>` (a team member's own key too), `owner`, `key:…<last four>`,
   * `key:<hash prefix>`, `provider`, `operator` or `svc`.
   */
  actor: string;
  /** What it was done to, in words ("key …a1b2", "collection docs"); null when the action says it. */
  target: string | null;
  subscriptionId: string | null;
  userId: string | null;
  customerId: string | null;
  details: Record<string, string | number | boolean | null>;
}

export type AuditedEvent =
  | AccountEvent
  | KeyEvent
  | KeyCheckRefused
  | SubscriptionEvent
  | CollectionConfigured
  | CollectionDeleted
  | IndexRequested
  | TeamEvent;

export const AUDITED_TYPES = [
  'account.registered',
  'account.logged-in',
  'account.password-changed',
  'account.verification-requested',
  'account.email-verified',
  'account.sso-linked',
  'account.sso-unlinked',
  'account.logged-out',
  'account.assistant-connected',
  'account.assistant-disconnected',
  'key.generated',
  'key.revoked',
  'key.limits-set',
  'key.tier-changed',
  'key.check-refused',
  ...SUBSCRIPTION_EVENT_TYPES,
  'rag.collection-configured',
  'rag.collection-deleted',
  'rag.index-requested',
  ...TEAM_EVENT_TYPES,
] as const satisfies readonly AuditedEvent['type'][];

const hashPrefix = (keyHash: string) => keyHash.slice(0, 12);
const ofKey = (d: { keyHash: string; subscriptionId: string }) => ({
  target: `key ${hashPrefix(d.keyHash)}`,
  subscriptionId: d.subscriptionId,
});
/**
 * Who did a keyed call: the team member, by their account, for a member's own key; else the key by its
 * last four. Events from before they said (v1) keep what they were written as (`before`).
 */
const actorOf = (d: ActedBy, before: string): string =>
  d.memberUserId ? `account:${d.memberUserId}` : d.keyLast4 ? `key:…${d.keyLast4}` : before;
const keyOf = (d: ActedBy): AuditEntry['details'] => (d.keyLast4 ? { key: `…${d.keyLast4}` } : {});
const iso = (d: Date | null | undefined) => (d ? new Date(d).toISOString() : null);

/**
 * The entry's id: the event's, except a refused check, which replicas may each publish for the same
 * key, code and minute: those make one entry.
 */
export function entryIdOf(event: AuditedEvent): string {
  if (event.type === 'key.check-refused') return `refused:${event.data.keyHash}:${event.data.code}:${event.data.minute}`;
  return event.metadata.eventId;
}

export function auditEntryOf(event: AuditedEvent): AuditEntry {
  const base = {
    entryId: entryIdOf(event),
    at: event.metadata.occurredAt,
    action: event.type as string,
    subscriptionId: null as string | null,
    userId: null as string | null,
    customerId: null as string | null,
    target: null as string | null,
    details: {} as AuditEntry['details'],
  };
  switch (event.type) {
    case 'account.registered':
      return { ...base, actor: `account:${event.data.userId}`, userId: event.data.userId };
    case 'account.logged-in':
      // Filed under the account that was signed in, a single sign-on too (the team it came through in
      // details): the person whose account was opened reads it in their own log. Filed under the team
      // instead, a sign-on through a hostile owner's provider would be in that owner's log only.
      return {
        ...base,
        actor: `account:${event.data.userId}`,
        userId: event.data.userId,
        details: { method: event.data.method, ...(event.data.subscriptionId ? { team: event.data.subscriptionId } : {}) },
      };
    // A provider identity recorded on (or removed from) an account: the account's own entry, like a log-in.
    case 'account.sso-linked':
      return {
        ...base,
        actor: `account:${event.data.userId}`,
        userId: event.data.userId,
        target: `single sign-on ${event.data.issuer}`,
        details: { team: event.data.subscriptionId, issuer: event.data.issuer, subject: event.data.subject, via: event.data.via },
      };
    case 'account.sso-unlinked':
      return {
        ...base,
        actor: `account:${event.data.userId}`,
        userId: event.data.userId,
        target: `single sign-on ${event.data.issuer}`,
        details: { team: event.data.subscriptionId, issuer: event.data.issuer },
      };
    case 'account.password-changed':
    // A link mailed and an address proved: who, never the link's secret.
    case 'account.verification-requested':
    case 'account.email-verified':
      return { ...base, actor: `account:${event.data.userId}`, userId: event.data.userId };
    case 'account.logged-out':
      return { ...base, actor: `account:${event.data.userId}`, userId: event.data.userId, details: { scope: event.data.scope } };
    // An assistant's OAuth grant: the account's own entry; the key by its last four only.
    case 'account.assistant-connected':
      return {
        ...base,
        actor: `account:${event.data.userId}`,
        userId: event.data.userId,
        target: `assistant ${event.data.clientName}`,
        details: {
          client: event.data.clientId,
          scopes: event.data.scopes.join(' '),
          tier: event.data.tier,
          key: `…${event.data.keyLast4}`,
        },
      };
    case 'account.assistant-disconnected':
      return {
        ...base,
        actor: event.data.by === 'customer' ? `account:${event.data.userId}` : 'svc',
        userId: event.data.userId,
        target: `assistant ${event.data.clientName}`,
        details: { client: event.data.clientId, by: event.data.by },
      };
    case 'key.generated': {
      const k = event.data;
      const rotated = k.source === 'rotation';
      return {
        ...base,
        action: rotated ? 'key.rotated' : 'key.issued',
        actor: rotated ? 'owner' : k.source === 'api' ? 'operator' : 'svc',
        target: `key …${k.last4}`,
        subscriptionId: k.subscriptionId,
        customerId: k.customerId,
        details: {
          tier: k.tier,
          generation: k.generation ?? 0,
          replacesLast4: k.replacesLast4 ?? null,
          expiresAt: iso(k.expiresAt),
          previousValidUntil: iso(k.previousValidUntil),
          // A team member's own key: whose it is.
          ...(k.source === 'member' ? { member: k.memberUserId ?? null } : {}),
        },
      };
    }
    // A key's events name it by its hash: the entry by the hash's first 12 hex, with its subscription.
    case 'key.revoked':
      return { ...base, ...ofKey(event.data), actor: 'operator', details: { reason: event.data.reason } };
    case 'key.limits-set':
      return { ...base, ...ofKey(event.data), actor: 'owner', details: { requestsPerMinute: event.data.requestsPerMinute } };
    case 'key.tier-changed':
      return { ...base, ...ofKey(event.data), actor: 'svc', details: { tier: event.data.tier, reason: event.data.reason } };
    case 'key.check-refused':
      return {
        ...base,
        ...ofKey(event.data),
        actor: `key:${hashPrefix(event.data.keyHash)}`,
        details: { code: event.data.code, minute: event.data.minute },
      };
    case 'rag.collection-configured':
      return {
        ...base,
        actor: actorOf(event.data, 'owner'),
        target: `collection ${event.data.collectionName}`,
        customerId: event.data.customerId,
        details: { vectorDB: event.data.vectorDB, ...keyOf(event.data) },
      };
    case 'rag.collection-deleted':
      return {
        ...base,
        actor: actorOf(event.data, 'owner'),
        target: `collection ${event.data.collectionName}`,
        customerId: event.data.customerId,
        details: keyOf(event.data),
      };
    case 'rag.index-requested':
      return {
        ...base,
        actor: actorOf(event.data, event.data.keyHash ? `key:${hashPrefix(event.data.keyHash)}` : 'owner'),
        target: `collection ${event.data.collectionName}`,
        customerId: event.data.customerId,
        details: { source: event.data.source, files: event.data.files.length, ...keyOf(event.data) },
      };
    case 'team.member-invited':
    case 'team.invitation-revoked':
    case 'team.member-joined':
    case 'team.member-removed':
    case 'team.member-role-changed':
    case 'team.sso-configured':
    case 'team.sso-removed':
    case 'team.sso-domain-proof-requested':
    case 'team.sso-domain-verified':
      return teamEntry(base, event);
    default:
      return subscriptionEntry(base, event);
  }
}

function subscriptionEntry(base: Omit<AuditEntry, 'actor'>, event: SubscriptionEvent): AuditEntry {
  const d = event.data as { subscriptionId: string; userId: string | null; customerId?: string; tier?: string; endsAt?: Date | null };
  return {
    ...base,
    actor: 'provider',
    target: `subscription ${d.subscriptionId}`,
    subscriptionId: d.subscriptionId,
    userId: d.userId ?? null,
    customerId: d.customerId ?? null,
    details: {
      ...(d.tier !== undefined ? { tier: d.tier } : {}),
      ...(d.endsAt !== undefined ? { endsAt: iso(d.endsAt) } : {}),
    },
  };
}

type EntryBase = Omit<AuditEntry, 'actor'>;

/**
 * A workspace's changes: done by an account (the owner, an admin, or the member joining or leaving).
 * Scoped by the workspace alone (userId stays null): an account's own entries appear in the log of
 * every team it owns, and one team's membership changes must not.
 */
function teamEntry(base: EntryBase, event: TeamEvent): AuditEntry {
  const team = { ...base, subscriptionId: event.data.subscriptionId };
  switch (event.type) {
    case 'team.member-invited': {
      const d = event.data;
      return {
        ...team,
        actor: `account:${d.invitedBy}`,
        target: `invitation ${d.email}`,
        details: { invitationId: d.invitationId, role: d.role, expiresAt: iso(d.expiresAt) },
      };
    }
    case 'team.invitation-revoked':
      return { ...team, actor: `account:${event.data.revokedBy}`, target: `invitation ${event.data.invitationId}` };
    case 'team.member-joined': {
      const d = event.data;
      return {
        ...team,
        actor: `account:${d.userId}`,
        target: `member ${d.email}`,
        details: { userId: d.userId, role: d.role, via: d.via, invitationId: d.invitationId },
      };
    }
    case 'team.member-removed': {
      const d = event.data;
      return {
        ...team,
        actor: `account:${d.removedBy}`,
        target: `member ${d.userId}`,
        details: { left: d.removedBy === d.userId },
      };
    }
    case 'team.member-role-changed':
      return {
        ...team,
        actor: `account:${event.data.changedBy}`,
        target: `member ${event.data.userId}`,
        details: { role: event.data.role },
      };
    case 'team.sso-configured': {
      const d = event.data;
      // The client secret is never in an entry, not even encrypted.
      return {
        ...team,
        actor: `account:${d.configuredBy}`,
        target: 'single sign-on',
        details: { issuer: d.issuer, clientId: d.clientId, domains: d.domains.join(',') },
      };
    }
    case 'team.sso-removed':
      return { ...team, actor: `account:${event.data.removedBy}`, target: 'single sign-on' };
    case 'team.sso-domain-proof-requested': {
      const d = event.data;
      // The token is never in an entry, not even hashed or sealed.
      return {
        ...team,
        actor: `account:${d.requestedBy}`,
        target: `single sign-on domain ${d.domain}`,
        details: { address: d.address, expiresAt: d.expiresAt.toISOString() },
      };
    }
    case 'team.sso-domain-verified':
      return { ...team, actor: `account:${event.data.verifiedBy}`, target: `single sign-on domain ${event.data.domain}` };
    default: {
      const unhandled: never = event;
      throw new Error(`audit: unhandled team event ${(unhandled as { type: string }).type}`);
    }
  }
}
