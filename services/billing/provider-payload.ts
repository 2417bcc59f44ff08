import { z } from 'zod';
import {
  isSubscriptionEventName,
  type InvoiceEventName,
  type ProviderEvent,
  type ProviderInvoice,
  type ProviderSubscription,
  type SubscriptionEventName,
} from './provider-event.ts';

/**
 * Turns a verified webhook body (Lemon Squeezy's JSON:API envelope) into typed input (pure).
 * Messages name the field and never echo its value: bodies carry customers' e-mails and names.
 */

export type ParsedPayload = ProviderEvent | { ignored: string } | { error: string };

/** The event name recorded for a signed body without a readable meta.event_name (billing dead-letters it). */
export const UNREADABLE_EVENT_NAME = '(unreadable)';

/** What every webhook needs to be recorded, whatever its event: read before deciding to act on it. */
export interface WebhookEnvelope {
  eventName: string;
  webhookId: string;
  subscriptionId: string | null;
}

const INVOICE_EVENT_NAMES: readonly InvoiceEventName[] = ['subscription_payment_success', 'subscription_payment_failed'];
const isInvoiceEventName = (name: SubscriptionEventName): name is InvoiceEventName =>
  (INVOICE_EVENT_NAMES as readonly string[]).includes(name);

// Every message completes "<field path> …".
const problem = (expected: string) => ({
  error: (issue: { input?: unknown }) => (issue.input === undefined ? 'is required' : `must be ${expected}`),
});

const text = z.string(problem('a non-empty string')).min(1, problem('a non-empty string'));
const optionalText = z
  .string(problem('a string or null'))
  .nullish()
  .transform((v) => v ?? null);
/** The provider sends numeric ids; ours are strings everywhere. */
const id = z
  .union([z.string().min(1, problem('a non-empty id')), z.number().int().nonnegative()], problem('a string or integer id'))
  .transform(String);
// Offsets are required (no local times): "2026-11-21T10:04:11.000000Z" is an instant, and Date keeps its milliseconds.
const instant = z.iso.datetime({ offset: true, ...problem('an ISO 8601 date-time with a time zone') }).transform((s) => new Date(s));
const optionalInstant = instant.nullish().transform((v) => v ?? null);
const object = <S extends z.core.$ZodLooseShape>(shape: S) => z.object(shape, problem('an object'));

const envelope = z.object(
  {
    meta: object({
      event_name: text,
      webhook_id: text.nullish(),
    }),
  },
  problem('a JSON object'),
);

const customData = object({ user_id: id.nullish() }).nullish();

const subscriptionPayload = object({
  meta: object({ custom_data: customData }),
  data: object({
    type: z.literal('subscriptions', problem('"subscriptions"')),
    id,
    attributes: object({
      customer_id: id,
      user_email: text,
      user_name: optionalText,
      variant_id: id,
      status: text,
      renews_at: optionalInstant,
      ends_at: optionalInstant,
      updated_at: instant,
      urls: object({ customer_portal: optionalText, update_payment_method: optionalText }).nullish(),
    }),
  }),
});

const invoicePayload = object({
  meta: object({ custom_data: customData }),
  data: object({
    type: z.literal('subscription-invoices', problem('"subscription-invoices"')),
    id,
    attributes: object({
      subscription_id: id,
      customer_id: id,
      user_email: text,
      user_name: optionalText,
      status: text,
      updated_at: instant,
    }),
  }),
});

function explain(error: z.ZodError, prefix = ''): string {
  const issue = error.issues[0];
  if (!issue) return `${prefix}invalid payload`;
  const field = issue.path.length > 0 ? issue.path.join('.') : 'body';
  return `${prefix}${field} ${issue.message}`;
}

/** meta.event_name and the webhook id (meta.webhook_id, else `webhookIdFallback`), for any event. */
export function readEnvelope(body: unknown, webhookIdFallback: string): WebhookEnvelope | { error: string } {
  const parsed = envelope.safeParse(body);
  if (!parsed.success) return { error: explain(parsed.error) };
  const { event_name: eventName, webhook_id: webhookId } = parsed.data.meta;
  return { eventName, webhookId: webhookId ?? webhookIdFallback, subscriptionId: subscriptionIdOf(body) };
}

/**
 * The subscription a webhook concerns, for any event name (ignored ones too, so that one
 * subscription's webhooks share a partition): data.id of a subscription object,
 * attributes.subscription_id of a subscription invoice, else null. Never throws.
 */
export function subscriptionIdOf(body: unknown): string | null {
  const data = field(body, 'data');
  const type = field(data, 'type');
  const raw =
    type === 'subscriptions'
      ? field(data, 'id')
      : type === 'subscription-invoices'
        ? field(field(data, 'attributes'), 'subscription_id')
        : undefined;
  return (typeof raw === 'string' && raw.length > 0) || (typeof raw === 'number' && Number.isInteger(raw)) ? String(raw) : null;
}

function field(value: unknown, name: string): unknown {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>)[name] : undefined;
}

/** A subscription event as typed input; other event names are `{ ignored }`; a wrong shape is `{ error }`. */
export function parseProviderEvent(body: unknown, webhookIdFallback: string): ParsedPayload {
  const env = readEnvelope(body, webhookIdFallback);
  if ('error' in env) return env;
  const { eventName, webhookId } = env;
  if (!isSubscriptionEventName(eventName)) return { ignored: eventName };

  if (isInvoiceEventName(eventName)) {
    const parsed = invoicePayload.safeParse(body);
    if (!parsed.success) return { error: explain(parsed.error, `${eventName}: `) };
    const { meta, data } = parsed.data;
    const a = data.attributes;
    const invoice: ProviderInvoice = {
      kind: 'invoice',
      eventName,
      webhookId,
      invoiceId: data.id,
      subscriptionId: a.subscription_id,
      customerId: a.customer_id,
      userId: meta.custom_data?.user_id ?? null,
      email: a.user_email,
      name: a.user_name,
      status: a.status,
      updatedAt: a.updated_at,
    };
    return invoice;
  }

  const parsed = subscriptionPayload.safeParse(body);
  if (!parsed.success) return { error: explain(parsed.error, `${eventName}: `) };
  const { meta, data } = parsed.data;
  const a = data.attributes;
  const subscription: ProviderSubscription = {
    kind: 'subscription',
    eventName,
    webhookId,
    subscriptionId: data.id,
    customerId: a.customer_id,
    userId: meta.custom_data?.user_id ?? null,
    email: a.user_email,
    name: a.user_name,
    variantId: a.variant_id,
    status: a.status,
    renewsAt: a.renews_at,
    endsAt: a.ends_at,
    updatedAt: a.updated_at,
    customerPortalUrl: a.urls?.customer_portal ?? null,
    updatePaymentUrl: a.urls?.update_payment_method ?? null,
  };
  return subscription;
}
