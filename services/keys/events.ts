import { defineEvent, type EventDefinition } from '../../events/catalog.ts';
import type { Event } from '../../events/envelope.ts';
import type { Tier } from './tiers.ts';

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

/** Every event about keys themselves. */
export type KeyEvent = KeyGenerated | KeyTierChanged | KeyRevoked;

export const KEY_EVENTS: readonly EventDefinition[] = (['key.generated', 'key.tier-changed', 'key.revoked'] as const).map((type) =>
  defineEvent<KeyEvent>({ type, topic: KEYS_TOPIC, schema: `keys/${type}`, key: (d) => d.keyHash }),
);
