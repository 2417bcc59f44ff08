import type { AnyEventDefinition } from '../../events/catalog.ts';
import type { Event } from '../../events/envelope.ts';
import type { Tier } from '../platform/config.ts';

export const KEYS_TOPIC = 'keys.events';

export interface KeyGeneratedData {
  keyHash: string;
  last4: string;
  tier: Tier;
  customerId: string;
  subscriptionId: string;
  email: string;
  /** base64(iv | tag | ciphertext), AES-256-GCM under KEY_ENCRYPTION_KEY: only the mailer opens it. */
  encryptedKey: string;
  source: 'subscription' | 'api';
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

export type KeyGenerated = Event<'key.generated', KeyGeneratedData>;
export type KeyTierChanged = Event<'key.tier-changed', KeyTierChangedData>;
export type KeyRevoked = Event<'key.revoked', KeyRevokedData>;

const byHash = (d: { keyHash: string }) => d.keyHash;

export const KEY_EVENTS: AnyEventDefinition[] = (['key.generated', 'key.tier-changed', 'key.revoked'] as const).map((type) => ({
  type,
  topic: KEYS_TOPIC,
  schema: `keys/${type}`,
  key: byHash,
}));
