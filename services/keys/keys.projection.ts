import type { Db, Document } from 'mongodb';
import { projectionCollection } from '../../events/collections.ts';
import { findProjected, findStored, type Projection, type StoredDocument } from '../../events/projection.ts';
import { SUBSCRIPTION_EVENT_TYPES, type SubscriptionEvent, type SubscriptionStatus } from '../billing/events.ts';
import { grantedTier } from '../billing/granted-tier.ts';
import type { Tier } from '../kernel/tiers.ts';
import type { KeyEvent } from './events.ts';

/**
 * One document per subscription: its key (hash and last four only) and the tier the key grants,
 * which follows the subscription (cancelled keeps it until the end, ended/expired is free).
 */
export interface KeyRecord {
  subscriptionId: string;
  keyHash: string | null;
  last4: string | null;
  /** What the key grants now. */
  tier: Tier;
  status: 'active' | 'revoked' | 'none';
  subscriptionStatus: SubscriptionStatus | null;
  /** The paid tier of the subscription, kept so resuming restores it. */
  paidTier: Tier | null;
  customerId: string | null;
  email: string | null;
  /** The account that owns the subscription (its JWT `sub`), when billing knows it. */
  userId?: string | null;
  /** How often the key was replaced: the key.generated with the highest generation is the key. */
  generation?: number;
  createdAt: Date | null;
  endsAt: Date | null;
}

const empty = (subscriptionId: string): KeyRecord => ({
  subscriptionId,
  keyHash: null,
  last4: null,
  tier: 'free',
  status: 'none',
  subscriptionStatus: null,
  paidTier: null,
  customerId: null,
  email: null,
  userId: null,
  generation: 0,
  createdAt: null,
  endsAt: null,
});

/**
 * What the key grants: what its subscription grants (grantedTier), or for a key no subscription
 * event has reached yet (one made through POST /generate) the tier it was made with.
 */
const grants = (status: SubscriptionStatus | null, paid: Tier | null, fallback: Tier): Tier =>
  status === null ? fallback : grantedTier(status, paid ?? fallback);

function evolveKey(doc: KeyRecord | null, event: KeyEvent | SubscriptionEvent): KeyRecord {
  const current = doc ?? empty(event.data.subscriptionId);
  switch (event.type) {
    case 'key.generated': {
      const k = event.data;
      const generation = k.generation ?? 0;
      const held = current.generation ?? 0;
      const replacing = current.keyHash !== null && current.keyHash !== k.keyHash;
      // One key per subscription: a second key of the same generation (a lost race) is not adopted, and
      // neither is an older one. Rotations sit on other partitions (keyed by key hash), so they can
      // arrive in any order: the highest generation wins whatever the order.
      if (replacing && generation <= held) return current;
      return {
        ...current,
        keyHash: k.keyHash,
        last4: k.last4,
        status: 'active',
        generation,
        customerId: current.customerId ?? k.customerId,
        email: current.email ?? k.email,
        createdAt: replacing ? event.metadata.occurredAt : (current.createdAt ?? event.metadata.occurredAt),
        tier: grants(current.subscriptionStatus, current.paidTier, k.tier),
      };
    }
    case 'key.revoked':
      return event.data.keyHash === current.keyHash ? { ...current, status: 'revoked' } : current;
    case 'key.tier-changed':
      return current;
    case 'subscription.created': {
      const s = event.data;
      return {
        ...current,
        subscriptionStatus: s.status,
        paidTier: s.tier,
        customerId: s.customerId,
        email: s.email,
        userId: s.userId ?? current.userId ?? null,
        tier: grants(s.status, s.tier, s.tier),
      };
    }
    case 'subscription.updated': {
      const s = event.data;
      return {
        ...current,
        subscriptionStatus: s.status,
        paidTier: s.tier,
        endsAt: s.endsAt,
        userId: s.userId ?? current.userId ?? null,
        tier: grants(s.status, s.tier, s.tier),
      };
    }
    case 'subscription.resumed': {
      const s = event.data;
      return { ...current, subscriptionStatus: 'active', paidTier: s.tier, endsAt: null, tier: grants('active', s.tier, s.tier) };
    }
    case 'subscription.cancelled':
      return {
        ...current,
        subscriptionStatus: 'cancelled',
        endsAt: event.data.endsAt,
        tier: grants('cancelled', current.paidTier, current.tier),
      };
    case 'subscription.expired':
    case 'subscription.ended':
      return { ...current, subscriptionStatus: 'ended', tier: grants('ended', current.paidTier, current.tier) };
    case 'subscription.payment-failed':
      return current.subscriptionStatus === 'active' ? { ...current, subscriptionStatus: 'past_due' } : current;
    case 'subscription.payment-succeeded':
      return current.subscriptionStatus === 'past_due' ? { ...current, subscriptionStatus: 'active' } : current;
    default: {
      const unhandled: never = event;
      throw new Error(`keys projection: unhandled event ${(unhandled as { type: string }).type}`);
    }
  }
}

type KeyDocument = KeyRecord & Record<string, unknown>;

export const keysProjection: Projection<KeyDocument, KeyEvent | SubscriptionEvent> = {
  name: 'keys',
  collection: 'keys',
  handles: ['key.generated', 'key.revoked', ...SUBSCRIPTION_EVENT_TYPES],
  documentId: (event) => event.data.subscriptionId,
  evolve: (doc, event) => ({ ...evolveKey(doc, event) }),
  indexes: [{ key: { keyHash: 1 } }],
};

export async function getKeyBySubscription(db: Db, subscriptionId: string): Promise<KeyRecord | null> {
  return findProjected<KeyRecord>(await projectionCollection(db, keysProjection.collection), subscriptionId);
}

/** The stored document (bookkeeping included) holding this key, for a cache that follows the log. */
export async function findStoredKey(db: Db, keyHash: string): Promise<StoredDocument<Document> | null> {
  return findStored(await projectionCollection(db, keysProjection.collection), { keyHash, _deleted: { $ne: true } });
}
