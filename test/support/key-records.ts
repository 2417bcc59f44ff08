import type { KeyRecord } from '../../services/keys/keys.projection.ts';

/** A pro subscription's active key as the keys projection holds it; `over` sets what a test is about. */
export const activeKeyRecord = (over: Partial<KeyRecord> = {}): KeyRecord => ({
  subscriptionId: 'sub-1',
  keyHash: 'a'.repeat(64),
  last4: 'abcd',
  tier: 'pro',
  status: 'active',
  subscriptionStatus: 'active',
  paidTier: 'pro',
  customerId: 'cus-1',
  email: null,
  createdAt: null,
  endsAt: null,
  ...over,
});
