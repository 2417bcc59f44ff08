import type { Db } from 'mongodb';
import { projectionCollection } from '../../events/collections.ts';
import { findProjected, type Projection } from '../../events/projection.ts';
import type { Tier } from '../kernel/tiers.ts';
import { SUBSCRIPTION_EVENT_TYPES, type SubscriptionEvent } from '../billing/events.ts';
import { grantedTier } from '../billing/granted-tier.ts';
import type { AccountEmailVerified, AccountPasswordChanged, AccountRegistered } from './events.ts';

/** The users read model: what /auth/me and login answer with. */
export interface User {
  id: string;
  email: string;
  name: string;
  tier: Tier;
  createdAt: Date;
  /** Moved on by every password change: tokens carrying an older one are refused. 0 until the first. */
  tokenVersion?: number;
  /** When the account proved its address (account.email-verified); absent: not verified. */
  emailVerifiedAt?: Date;
}

/**
 * Stored shape: the account's fields (from accounts.events) and its tier (from subscriptions.events)
 * are set by different topics, whose relative order is not defined (a replay may see a
 * subscription before the registration): each event sets only its own fields, so any order of
 * the two topics gives the same document.
 */
type UserDocument = Partial<User> & { tier: Tier } & Record<string, unknown>;

export const usersProjection: Projection<
  UserDocument,
  AccountRegistered | AccountPasswordChanged | AccountEmailVerified | SubscriptionEvent
> = {
  name: 'users',
  collection: 'users',
  handles: ['account.registered', 'account.password-changed', 'account.email-verified', ...SUBSCRIPTION_EVENT_TYPES],
  // Subscription events name the account when billing knew it (checkout custom data or e-mail).
  documentId: (event) => event.data.userId,
  evolve(user, event) {
    const current: UserDocument = user ?? { tier: 'free' };
    switch (event.type) {
      case 'account.registered': {
        // A second registration of the same id cannot happen; keep the first if the log says otherwise.
        if (current.email) return current;
        const d = event.data;
        return { ...current, id: d.userId, email: d.email, name: d.name, createdAt: event.metadata.occurredAt };
      }
      // Versions only grow: an older change delivered late does not bring revoked tokens back.
      case 'account.password-changed':
        return { ...current, tokenVersion: Math.max(current.tokenVersion ?? 0, event.data.tokenVersion) };
      // Only ever set, and the first time counts: a replay gives the same date.
      case 'account.email-verified':
        return current.emailVerifiedAt ? current : { ...current, emailVerifiedAt: event.metadata.occurredAt };
      // The account's tier follows its subscription; cancelled keeps it until the period ends.
      case 'subscription.created':
      case 'subscription.updated':
        return { ...current, tier: grantedTier(event.data.status, event.data.tier) };
      case 'subscription.resumed':
        return { ...current, tier: grantedTier('active', event.data.tier) };
      case 'subscription.expired':
      case 'subscription.ended':
        return { ...current, tier: grantedTier('ended', current.tier) };
      default:
        return user;
    }
  },
  indexes: [{ key: { email: 1 } }],
};

/** A user exists once registered; a document holding only a tier is waiting for its registration. */
export async function getUser(db: Db, id: string): Promise<User | null> {
  const doc = await findProjected<UserDocument>(await projectionCollection(db, usersProjection.collection), id);
  return doc?.email ? (doc as User) : null;
}

/**
 * The account whose verified address this is: billing links a subscription that names no account
 * to it. An account that has not verified its address is not found (docs/security-and-tenancy.md:
 * whoever signs up first with an address does not own what that address buys).
 */
export async function findUserIdByEmail(db: Db, email: string): Promise<string | null> {
  const users = await projectionCollection(db, usersProjection.collection);
  const doc = await users.findOne({ email, emailVerifiedAt: { $exists: true }, _deleted: { $ne: true } });
  return doc ? String(doc._id) : null;
}
