import { defineEvent, type EventDefinition } from '../../events/catalog.ts';
import type { Event } from '../../events/envelope.ts';
import type { Tier } from '../kernel/tiers.ts';

export const KEYS_TOPIC = 'keys.events';

export interface KeyGeneratedData {
  keyHash: string;
  last4: string;
  tier: Tier;
  customerId: string;
  subscriptionId: string;
  email: string;
  /** AES-256-GCM under KEY_ENCRYPTION_KEY, bound to keyHash and subscriptionId (key-crypto.ts): only the mailer opens it. */
  encryptedKey: string;
  /**
   * subscription: the issuer's, e-mailed; api: POST /generate's, shown in its answer; rotation: POST
   * /keys/rotate's, e-mailed; member: a team member's own key, e-mailed to the member.
   */
  source: 'subscription' | 'api' | 'rotation' | 'member';
  /** 0 for the subscription's first key, n for its n-th rotation: the highest generation is the key. */
  generation: number;
  /** The last four of the key a rotation replaces, for the e-mail; null otherwise. */
  replacesLast4: string | null;
  /** When the key stops working (EXPIRED from then on); null: never. Events before v3 have null. */
  expiresAt?: Date | null;
  /** Rotation: until when the replaced key keeps working beside this one; null: it stops at once. */
  previousValidUntil?: Date | null;
  /** v4, member keys: the member's account and membership (removing the member revokes the key); null otherwise. */
  memberUserId?: string | null;
  membershipId?: string | null;
}
export interface KeyTierChangedData {
  keyHash: string;
  subscriptionId: string;
  tier: Tier;
  reason: string;
}
export interface KeyRevokedData {
  keyHash: string;
  subscriptionId: string;
  reason: string;
}

export interface KeyLimitsSetData {
  keyHash: string;
  subscriptionId: string;
  /** The key's own limit per minute, at most its tier's; null: the tier's. */
  requestsPerMinute: number | null;
}

export interface KeyCheckRefusedData {
  keyHash: string;
  subscriptionId: string;
  code: 'RATE_LIMITED' | 'USAGE_EXCEEDED' | 'DISABLED' | 'EXPIRED';
  /** The UTC minute, ISO 8601: one event per key, code and minute. */
  minute: string;
}

export type KeyGenerated = Event<'key.generated', KeyGeneratedData>;
export type KeyCheckRefused = Event<'key.check-refused', KeyCheckRefusedData>;
export type KeyLimitsSet = Event<'key.limits-set', KeyLimitsSetData>;
export type KeyTierChanged = Event<'key.tier-changed', KeyTierChangedData>;
export type KeyRevoked = Event<'key.revoked', KeyRevokedData>;

/** Every event about keys themselves. */
export type KeyEvent = KeyGenerated | KeyTierChanged | KeyRevoked | KeyLimitsSet;

export const KEY_EVENTS: readonly EventDefinition[] = [
  ...(['key.generated', 'key.tier-changed', 'key.revoked', 'key.limits-set'] as const).map((type) =>
    defineEvent<KeyEvent>({ type, topic: KEYS_TOPIC, schema: `keys/${type}`, key: (d) => d.keyHash }),
  ),
  // Not a KeyEvent: the keys projection never reads it; the audit log does.
  defineEvent<KeyCheckRefused>({ type: 'key.check-refused', topic: KEYS_TOPIC, schema: 'keys/key.check-refused', key: (d) => d.keyHash }),
];
