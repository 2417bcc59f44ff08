import { randomUUID } from 'node:crypto';
import { newEvent } from '../../events/envelope.ts';
import type { SubscriptionCreated } from '../../services/billing/events.ts';
import type { Tier } from '../../services/kernel/tiers.ts';

/** A new active subscription as billing publishes it after the provider's webhook, for a test to publish itself. */
export function subscriptionCreated(s: { subscriptionId: string; userId: string | null; email: string; tier: Tier }): SubscriptionCreated {
  return newEvent('subscription.created', {
    subscriptionId: s.subscriptionId,
    customerId: `cus-${randomUUID().slice(0, 8)}`,
    userId: s.userId,
    email: s.email,
    name: null,
    variantId: '1',
    tier: s.tier,
    status: 'active',
    renewsAt: null,
    endsAt: null,
    providerUpdatedAt: new Date(),
    customerPortalUrl: null,
    updatePaymentUrl: null,
  });
}
