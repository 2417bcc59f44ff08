import type { BoundedContext } from '../platform/context.ts';
import { lazyService } from '../platform/lazy-service.ts';
import { BILLING_EVENTS } from './events.ts';
import { subscriptionsProjection } from './subscriptions.projection.ts';

/**
 * Billing has two services: the webhook ingress (HTTP, records each signed webhook in the log) and
 * billing itself (the subscription decider over those webhooks, its projection, the deadlines).
 */
export const billingContext: BoundedContext = {
  name: 'billing',
  events: BILLING_EVENTS,
  projections: [subscriptionsProjection],
  services: [
    lazyService('webhooks', async () => (await import('./webhook-ingress.service.ts')).webhookIngressService),
    lazyService('billing', async () => (await import('./billing.service.ts')).billingService),
  ],
};
