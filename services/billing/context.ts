import type { BoundedContext } from '../platform/context.ts';
import { billingService } from './billing.service.ts';
import { BILLING_EVENTS } from './events.ts';
import { subscriptionsProjection } from './subscriptions.projection.ts';
import { webhookIngressService } from './webhook-ingress.service.ts';

/**
 * Billing has two services: the webhook ingress (HTTP, records each signed webhook in the log) and
 * billing itself (the subscription decider over those webhooks, its projection, the deadlines).
 */
export const billingContext: BoundedContext = {
  name: 'billing',
  events: BILLING_EVENTS,
  projections: [subscriptionsProjection],
  services: [webhookIngressService, billingService],
};
