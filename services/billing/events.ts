import { defineEvent, type EventDefinition } from '../../events/catalog.ts';
import type { Event } from '../../events/envelope.ts';
import type { Tier } from '../kernel/tiers.ts';
import type { WebhookIgnoredBecause } from './webhook-scope.ts';

export const PAYMENT_WEBHOOKS_TOPIC = 'payments.webhooks';
export const SUBSCRIPTIONS_TOPIC = 'subscriptions.events';

export interface PaymentWebhookReceivedData {
  webhookId: string;
  eventName: string;
  subscriptionId: string | null;
  receivedAt: Date;
  body: string;
  /** The ingress's scope decision (test mode, another store): billing skips these. Null before v2. */
  ignoredBecause: WebhookIgnoredBecause | null;
}
export type PaymentWebhookReceived = Event<'payment.webhook-received', PaymentWebhookReceivedData>;

export type SubscriptionStatus = 'active' | 'past_due' | 'paused' | 'cancelled' | 'ended';

interface Urls {
  customerPortalUrl: string | null;
  updatePaymentUrl: string | null;
}

export interface SubscriptionCreatedData extends Urls {
  subscriptionId: string;
  customerId: string;
  userId: string | null;
  email: string;
  name: string | null;
  variantId: string;
  tier: Tier;
  status: SubscriptionStatus;
  renewsAt: Date | null;
  endsAt: Date | null;
  providerUpdatedAt: Date;
}
export interface SubscriptionUpdatedData extends Urls {
  subscriptionId: string;
  userId: string | null;
  variantId: string;
  tier: Tier;
  status: SubscriptionStatus;
  renewsAt: Date | null;
  endsAt: Date | null;
  providerUpdatedAt: Date;
}
export interface SubscriptionCancelledData {
  subscriptionId: string;
  userId: string | null;
  endsAt: Date;
  email: string;
  name: string | null;
  reactivateUrl: string | null;
  providerUpdatedAt: Date;
}
export interface SubscriptionResumedData {
  subscriptionId: string;
  userId: string | null;
  tier: Tier;
  renewsAt: Date | null;
  providerUpdatedAt: Date;
}
export interface SubscriptionExpiredData {
  subscriptionId: string;
  userId: string | null;
  providerUpdatedAt: Date;
}
export interface SubscriptionEndedData {
  subscriptionId: string;
  userId: string | null;
  endsAt: Date;
  email: string;
  name: string | null;
}
export interface SubscriptionPaymentSucceededData {
  subscriptionId: string;
  userId: string | null;
  invoiceId: string;
  providerUpdatedAt: Date;
}
export interface SubscriptionPaymentFailedData {
  subscriptionId: string;
  userId: string | null;
  invoiceId: string;
  email: string;
  name: string | null;
  updatePaymentUrl: string | null;
  providerUpdatedAt: Date;
}

/** What the subscription decider emits: an event type with its data, ids assigned by the caller. */
export type SubscriptionEventData =
  | { type: 'subscription.created'; data: SubscriptionCreatedData }
  | { type: 'subscription.updated'; data: SubscriptionUpdatedData }
  | { type: 'subscription.cancelled'; data: SubscriptionCancelledData }
  | { type: 'subscription.resumed'; data: SubscriptionResumedData }
  | { type: 'subscription.expired'; data: SubscriptionExpiredData }
  | { type: 'subscription.ended'; data: SubscriptionEndedData }
  | { type: 'subscription.payment-succeeded'; data: SubscriptionPaymentSucceededData }
  | { type: 'subscription.payment-failed'; data: SubscriptionPaymentFailedData };

export type SubscriptionEvent = SubscriptionEventData extends infer U
  ? U extends { type: infer T extends string; data: infer D }
    ? Event<T, D>
    : never
  : never;
export type SubscriptionCreated = Extract<SubscriptionEvent, { type: 'subscription.created' }>;
export type SubscriptionCancelled = Extract<SubscriptionEvent, { type: 'subscription.cancelled' }>;
export type SubscriptionEnded = Extract<SubscriptionEvent, { type: 'subscription.ended' }>;
export type SubscriptionPaymentFailed = Extract<SubscriptionEvent, { type: 'subscription.payment-failed' }>;

/** Every event the billing context publishes. */
export type BillingEvent = PaymentWebhookReceived | SubscriptionEvent;

export const SUBSCRIPTION_EVENT_TYPES = [
  'subscription.created',
  'subscription.updated',
  'subscription.cancelled',
  'subscription.resumed',
  'subscription.expired',
  'subscription.ended',
  'subscription.payment-succeeded',
  'subscription.payment-failed',
] as const satisfies readonly SubscriptionEventData['type'][];

export const BILLING_EVENTS: readonly EventDefinition[] = [
  defineEvent<PaymentWebhookReceived>({
    type: 'payment.webhook-received',
    topic: PAYMENT_WEBHOOKS_TOPIC,
    schema: 'payments/payment.webhook-received',
    // One subscription's webhooks stay ordered; ones without a subscription spread by webhook.
    key: (d) => d.subscriptionId ?? d.webhookId,
  }),
  ...SUBSCRIPTION_EVENT_TYPES.map((type) =>
    defineEvent<SubscriptionEvent>({ type, topic: SUBSCRIPTIONS_TOPIC, schema: `subscriptions/${type}`, key: (d) => d.subscriptionId }),
  ),
];
