import type { Tier } from '../kernel/tiers.ts';
import type { SubscriptionStatus } from './events.ts';

/**
 * What a subscription grants, the one rule every read model follows (the subscription's own state,
 * the key that belongs to it, the account that holds it): its paid tier while it runs, past due
 * (access is kept while the provider retries the payment), paused, or cancelled (until the paid
 * period ends: then billing records it `ended`); free before it exists and once it has ended.
 */
export function grantedTier(status: SubscriptionStatus | 'none', paidTier: Tier): Tier {
  return status === 'ended' || status === 'none' ? 'free' : paidTier;
}
