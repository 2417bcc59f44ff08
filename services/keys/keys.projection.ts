import type { Db, Document } from 'mongodb';
import { projectionCollection } from '../../events/collections.ts';
import { findProjected, findStored, type Projection, type StoredDocument } from '../../events/projection.ts';
import { SUBSCRIPTION_EVENT_TYPES, type SubscriptionEvent, type SubscriptionStatus } from '../billing/events.ts';
import { grantedTier } from '../billing/granted-tier.ts';
import type { Tier } from '../kernel/tiers.ts';
import type { TeamMemberRemoved } from '../teams/events.ts';
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
  /** When the key stops working (EXPIRED from then on); null or absent: never. */
  expiresAt?: Date | null;
  /** The key the last rotation replaced, while its grace period lets it work beside the new one. */
  previous?: PreviousKey | null;
  /**
   * The key hash the subscription's month is counted under, whichever of its keys is used: its
   * first key's (the lowest generation seen), so a rotation carries the month over. Absent on
   * records from before it was kept: the current key's until the next rotation sets it.
   */
  meter?: Meter | null;
  /** The owner's own request rate for the subscription's key, under its tier's; null or absent: the tier's. */
  requestsPerMinute?: number | null;
  /** When the owner last set it: an older setting arriving late (another key's partition) is ignored. */
  limitsSetAt?: Date | null;
  createdAt: Date | null;
  endsAt: Date | null;
  /** Team members' own keys under this subscription: they share its tier, customer and quota. */
  members?: MemberKey[];
  /** Memberships that ended: a member key minted for one of them, arriving late, is not adopted. */
  endedMemberships?: string[];
  /** Set on the view of a member's key (recordForKey), never stored: whose key it is. */
  member?: { userId: string; membershipId: string };
  /**
   * Set on a key's view (recordForKey), never stored, when its uses count under another hash than
   * its own: the subscription's meter (its first key), so a team and a rotated key share one month.
   */
  usageKeyHash?: string;
}

/** Where a subscription's usage is counted: a key hash, and the generation of the key it came from. */
export interface Meter {
  keyHash: string;
  generation: number;
}

/** A team member's key: one per membership, mailed to the member, revoked when they leave. */
export interface MemberKey {
  userId: string;
  membershipId: string;
  keyHash: string;
  last4: string;
  email: string;
  createdAt: Date;
}

const ENDED_MEMBERSHIPS_KEPT = 500;

const madeFirst = (a: MemberKey, b: MemberKey): number =>
  new Date(a.createdAt).getTime() - new Date(b.createdAt).getTime() || (a.keyHash < b.keyHash ? -1 : a.keyHash > b.keyHash ? 1 : 0);

/** A replaced key that still works until `validUntil` (a rotation's grace period). */
export interface PreviousKey {
  keyHash: string;
  last4: string | null;
  validUntil: Date;
  /** Its own expiry, if earlier than the grace period's end. */
  expiresAt: Date | null;
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

function evolveKey(doc: KeyRecord | null, event: KeyEvent | SubscriptionEvent | TeamMemberRemoved): KeyRecord {
  const current = doc ?? empty(event.data.subscriptionId);
  switch (event.type) {
    case 'key.generated': {
      const k = event.data;
      if (k.source === 'member') {
        // Member keys sit beside the subscription's key and never replace it. Keys travel on
        // partitions by key hash and removals by workspace, so a removal can overtake its key.
        const membershipId = k.membershipId ?? '';
        const userId = k.memberUserId ?? '';
        if (!membershipId || !userId || current.endedMemberships?.includes(membershipId)) return current;
        if (current.members?.some((m) => m.keyHash === k.keyHash)) return current;
        const key: MemberKey = {
          userId,
          membershipId,
          keyHash: k.keyHash,
          last4: k.last4,
          email: k.email,
          createdAt: event.metadata.occurredAt,
        };
        // Kept in the order they were made, not of arrival (their partitions interleave differently in a replay).
        const members = [...(current.members ?? []).filter((m) => m.membershipId !== membershipId), key].sort(madeFirst);
        return { ...current, members };
      }
      const generation = k.generation ?? 0;
      const held = current.generation ?? 0;
      const replacing = current.keyHash !== null && current.keyHash !== k.keyHash;
      const meter = meterAfter(current, k.keyHash, generation);
      // One key per subscription: a second key of the same generation (a lost race) is not adopted, and
      // neither is an older one. Rotations sit on other partitions (keyed by key hash), so they can
      // arrive in any order: the highest generation wins whatever the order.
      if (replacing && generation <= held) return meter === current.meter ? current : { ...current, meter };
      // The replaced key keeps working only if it worked when it was replaced: a rotation never
      // brings a revoked key back.
      const until = k.previousValidUntil ?? null;
      const previous: PreviousKey | null =
        replacing && current.status === 'active' && current.keyHash && until && until > event.metadata.occurredAt
          ? { keyHash: current.keyHash, last4: current.last4, validUntil: until, expiresAt: current.expiresAt ?? null }
          : null;
      return {
        ...current,
        keyHash: k.keyHash,
        last4: k.last4,
        status: 'active',
        generation,
        expiresAt: k.expiresAt ?? null,
        previous,
        meter,
        customerId: current.customerId ?? k.customerId,
        email: current.email ?? k.email,
        createdAt: replacing ? event.metadata.occurredAt : (current.createdAt ?? event.metadata.occurredAt),
        tier: grants(current.subscriptionStatus, current.paidTier, k.tier),
      };
    }
    case 'key.revoked':
      if (current.members?.some((m) => m.keyHash === event.data.keyHash)) {
        return { ...current, members: current.members.filter((m) => m.keyHash !== event.data.keyHash) };
      }
      // Revoking a subscription's key ends the grace of the key it replaced too: nothing of it works.
      if (event.data.keyHash === current.keyHash) return { ...current, status: 'revoked', previous: null };
      return event.data.keyHash === current.previous?.keyHash ? { ...current, previous: null } : current;
    case 'key.tier-changed':
      return current;
    case 'team.member-removed': {
      const ended = event.data.membershipId;
      return {
        ...current,
        members: (current.members ?? []).filter((m) => m.membershipId !== ended),
        endedMemberships: [...(current.endedMemberships ?? []).filter((id) => id !== ended), ended].slice(-ENDED_MEMBERSHIPS_KEPT),
      };
    }
    case 'key.limits-set': {
      // The subscription's setting, kept across rotations; the newest wins whatever the order of arrival.
      const at = event.metadata.occurredAt;
      if (current.limitsSetAt && new Date(current.limitsSetAt) > at) return current;
      return { ...current, requestsPerMinute: event.data.requestsPerMinute, limitsSetAt: at };
    }
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

/**
 * The meter after a subscription key of this generation is seen: the lowest generation's key, the
 * first seen on a tie. Order-free but for that tie: a rotation can reach a replay before the key it
 * replaced (another partition), and the first key still wins once it arrives. A record from before
 * the meter was kept counts under its current key, which is what its month was counted under.
 */
function meterAfter(current: KeyRecord, keyHash: string, generation: number): Meter | null {
  const held: Meter | null = current.meter ?? (current.keyHash ? { keyHash: current.keyHash, generation: current.generation ?? 0 } : null);
  return held === null || generation < held.generation ? { keyHash, generation } : held;
}

/** The key hash the subscription's usage is counted under: its meter, or (no key seen yet) none. */
export const meteredUnder = (record: KeyRecord): string | null => record.meter?.keyHash ?? record.keyHash;

type KeyDocument = KeyRecord & Record<string, unknown>;

export const keysProjection: Projection<KeyDocument, KeyEvent | SubscriptionEvent | TeamMemberRemoved> = {
  name: 'keys',
  collection: 'keys',
  handles: ['key.generated', 'key.revoked', 'key.limits-set', ...SUBSCRIPTION_EVENT_TYPES, 'team.member-removed'],
  // A subscription's first event makes its document; its key comes after, applied by the issuer.
  createdBy: ['subscription.created'],
  documentId: (event) => event.data.subscriptionId,
  evolve: (doc, event) => ({ ...evolveKey(doc, event) }),
  indexes: [
    { key: { keyHash: 1 } },
    { key: { 'previous.keyHash': 1 } },
    { key: { 'members.keyHash': 1 } },
    { key: { userId: 1 } },
    { key: { email: 1 } },
  ],
};

/**
 * The record as this key sees it: the subscription's current key, the key it replaced while its
 * grace period lasts (then it expires at the grace period's end, or its own expiry if earlier), or a
 * team member's key. Null when the record does not hold this key. Every key of a subscription counts
 * its uses under the subscription's meter (usageKeyHash, set when it is not the key's own hash).
 */
export function recordForKey(record: KeyRecord | null, keyHash: string): KeyRecord | null {
  if (!record) return null;
  const metered = meteredUnder(record);
  const meteredAs = (own: string) => (metered && metered !== own ? { usageKeyHash: metered } : {});
  // The usual case (a key never rotated) is the stored record itself: nothing allocated per request.
  if (record.keyHash === keyHash) return metered && metered !== keyHash ? { ...record, usageKeyHash: metered } : record;
  const member = record.members?.find((m) => m.keyHash === keyHash);
  if (member) {
    // A member key works while its workspace does: on the team tier, and while the subscription's
    // key does. It shares that key's revocation and is bounded by its expiry (a rotation's new key
    // carries it on; the replaced key's grace does not matter to it). Its uses count under the
    // subscription's meter, so the whole team draws on one quota; its rate limit is its own.
    return {
      ...record,
      keyHash: member.keyHash,
      last4: member.last4,
      status: record.tier === 'team' && record.status !== 'revoked' ? 'active' : 'revoked',
      expiresAt: record.expiresAt ?? null,
      previous: null,
      requestsPerMinute: null,
      createdAt: member.createdAt,
      member: { userId: member.userId, membershipId: member.membershipId },
      ...meteredAs(member.keyHash),
    };
  }
  const previous = record.previous;
  if (!previous || previous.keyHash !== keyHash) return null;
  const ends = previous.expiresAt && previous.expiresAt < previous.validUntil ? previous.expiresAt : previous.validUntil;
  return { ...record, keyHash: previous.keyHash, last4: previous.last4, expiresAt: ends, previous: null, ...meteredAs(keyHash) };
}

export async function getKeyBySubscription(db: Db, subscriptionId: string): Promise<KeyRecord | null> {
  return findProjected<KeyRecord>(await projectionCollection(db, keysProjection.collection), subscriptionId);
}

/** The stored document (bookkeeping included) holding this key, for a cache that follows the log. */
export async function findStoredKey(db: Db, keyHash: string): Promise<StoredDocument<Document> | null> {
  const collection = await projectionCollection(db, keysProjection.collection);
  // Two equality lookups rather than one $or: the MongoDB-wire server pushes an equality down to its
  // index, an $or it may scan, and unknown keys (someone guessing) take this path.
  return (
    (await findStored(collection, { keyHash, _deleted: { $ne: true } })) ??
    (await findStored(collection, { 'previous.keyHash': keyHash, _deleted: { $ne: true } })) ??
    findStored(collection, { 'members.keyHash': keyHash, _deleted: { $ne: true } })
  );
}

/**
 * The subscriptions an account may own: linked to it by billing, or (unlinked) under its e-mail once
 * the account has verified it (callers still filter with key-owner.ts's ownedBy).
 */
export async function keysOwnedBy(
  db: Db,
  account: { userId: string; email: string; emailVerifiedAt?: Date | null | undefined },
): Promise<KeyRecord[]> {
  const collection = await projectionCollection(db, keysProjection.collection);
  const live = { _deleted: { $ne: true } };
  const [byUser, byEmail] = await Promise.all([
    collection
      .find({ userId: account.userId, ...live })
      .limit(100)
      .toArray(),
    account.emailVerifiedAt
      ? collection
          .find({ email: account.email.trim().toLowerCase(), ...live })
          .limit(100)
          .toArray()
      : [],
  ]);
  const seen = new Set<string>();
  const records: KeyRecord[] = [];
  for (const doc of [...byUser, ...byEmail]) {
    if (seen.has(String(doc._id))) continue;
    seen.add(String(doc._id));
    records.push(doc as unknown as KeyRecord);
  }
  return records;
}
