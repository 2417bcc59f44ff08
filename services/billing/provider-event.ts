/**
 * The provider's (Lemon Squeezy's) subscription webhooks, as typed input for the decider.
 * provider-payload.ts turns a verified JSON body into one of these; nothing else reads raw JSON.
 */
export const SUBSCRIPTION_EVENT_NAMES = [
  'subscription_created',
  'subscription_updated',
  'subscription_cancelled',
  'subscription_resumed',
  'subscription_expired',
  'subscription_payment_success',
  'subscription_payment_failed',
] as const;

export type SubscriptionEventName = (typeof SUBSCRIPTION_EVENT_NAMES)[number];
export type InvoiceEventName = 'subscription_payment_success' | 'subscription_payment_failed';

export const isSubscriptionEventName = (name: string): name is SubscriptionEventName =>
  (SUBSCRIPTION_EVENT_NAMES as readonly string[]).includes(name);

/** data.type = "subscriptions": the subscription object itself. */
export interface ProviderSubscription {
  kind: 'subscription';
  eventName: Exclude<SubscriptionEventName, InvoiceEventName>;
  webhookId: string;
  subscriptionId: string;
  customerId: string;
  /** meta.custom_data.user_id, when the checkout carried our account id. */
  userId: string | null;
  email: string;
  name: string | null;
  variantId: string;
  /** The provider's own status word: active, on_trial, paused, past_due, unpaid, cancelled, expired. */
  status: string;
  renewsAt: Date | null;
  endsAt: Date | null;
  updatedAt: Date;
  customerPortalUrl: string | null;
  updatePaymentUrl: string | null;
}

/** data.type = "subscription-invoices": names its subscription through attributes.subscription_id. */
export interface ProviderInvoice {
  kind: 'invoice';
  eventName: InvoiceEventName;
  webhookId: string;
  invoiceId: string;
  subscriptionId: string;
  customerId: string;
  userId: string | null;
  email: string;
  name: string | null;
  status: string;
  updatedAt: Date;
}

export type ProviderEvent = ProviderSubscription | ProviderInvoice;
