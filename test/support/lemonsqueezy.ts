import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Lemon Squeezy webhook bodies for tests, built on the shared sample payloads
 * (test/fixtures/lemonsqueezy, copies of the house's shared samples) so every event keeps
 * the provider's real shape; only what an event changes is overridden.
 */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FIXTURES_DIR = join(REPO_ROOT, 'test', 'fixtures', 'lemonsqueezy');

export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface Payload extends JsonObject {
  meta: JsonObject;
  data: JsonObject & { type: string; id: string; attributes: JsonObject };
}

/** A sample file's exact bytes (what a signature covers) and its parsed JSON. */
export function fixture(name: 'subscription_created' | 'subscription_payment_success'): { raw: Buffer; json: Payload } {
  const raw = readFileSync(join(FIXTURES_DIR, `${name}.json`));
  return { raw, json: JSON.parse(raw.toString('utf8')) as Payload };
}

export interface PayloadOverrides {
  /** data.id of a subscription, attributes.subscription_id of an invoice (default: the sample's 184220). */
  subscriptionId?: string | number;
  /** meta.webhook_id; null leaves it out (the ingress then uses the body's SHA-256). Default: a new UUID. */
  webhookId?: string | null;
  /** meta.custom_data.user_id; null leaves it out. Default: the sample's. */
  userId?: string | null;
  /** Replaces meta.custom_data wholesale (wins over userId); null leaves custom_data out. */
  customData?: JsonObject | null;
  /** Merged over the event's attributes; a key set to undefined is removed. */
  attributes?: { [key: string]: Json | undefined };
  /** Merged over meta (after the above); a key set to undefined is removed. */
  meta?: { [key: string]: Json | undefined };
}

export interface InvoiceOverrides extends PayloadOverrides {
  /** data.id (default: the sample's 1022871). */
  invoiceId?: string | number;
}

/** Subscription-object events we build defaults for; any other name gets the sample's attributes. */
export type SubscriptionPayloadEvent =
  | 'subscription_created'
  | 'subscription_updated'
  | 'subscription_cancelled'
  | 'subscription_resumed'
  | 'subscription_expired'
  | 'subscription_paused'
  | 'subscription_unpaused';
export type InvoicePayloadEvent =
  | 'subscription_payment_success'
  | 'subscription_payment_failed'
  | 'subscription_payment_recovered'
  | 'subscription_payment_refunded';

/** The provider's timestamp format: microseconds, UTC ("2026-11-21T10:04:11.000000Z"). */
export const providerTime = (d: Date): string => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

// Each payload built is strictly newer than the last, so a sequence of events built in order is
// also ordered by updated_at, as the provider's would be (two builds can share a millisecond).
let lastUpdated = 0;
const nextUpdatedAt = (): string => {
  lastUpdated = Math.max(Date.now(), lastUpdated + 1);
  return providerTime(new Date(lastUpdated));
};

const SUBSCRIPTION_DEFAULTS: Record<SubscriptionPayloadEvent, (sample: JsonObject, now: string) => JsonObject> = {
  subscription_created: () => ({}),
  subscription_updated: () => ({}),
  // Cancelled: still paid up until ends_at, the end of the current period.
  subscription_cancelled: (s) => ({ status: 'cancelled', status_formatted: 'Cancelled', cancelled: true, ends_at: s.renews_at ?? null }),
  subscription_resumed: () => ({ status: 'active', status_formatted: 'Active', cancelled: false, ends_at: null }),
  subscription_expired: (_s, now) => ({ status: 'expired', status_formatted: 'Expired', cancelled: true, ends_at: now }),
  subscription_paused: () => ({ status: 'paused', status_formatted: 'Paused', pause: { mode: 'void', resumes_at: null } }),
  subscription_unpaused: () => ({ status: 'active', status_formatted: 'Active', pause: null }),
};

const INVOICE_DEFAULTS: Record<InvoicePayloadEvent, JsonObject> = {
  subscription_payment_success: {},
  subscription_payment_failed: { status: 'pending', status_formatted: 'Pending' },
  subscription_payment_recovered: {},
  subscription_payment_refunded: { status: 'refunded', status_formatted: 'Refunded', refunded: true },
};

/** A `data.type = "subscriptions"` webhook body for `eventName` (also unknown names, e.g. to test ignoring). */
export function subscriptionPayload(eventName: SubscriptionPayloadEvent | (string & {}), overrides: PayloadOverrides = {}): Payload {
  const payload = fixture('subscription_created').json;
  const updatedAt = nextUpdatedAt();
  const defaults = (SUBSCRIPTION_DEFAULTS as Record<string, (sample: JsonObject, now: string) => JsonObject>)[eventName];
  payload.data.attributes = { ...payload.data.attributes, updated_at: updatedAt, ...defaults?.(payload.data.attributes, updatedAt) };
  if (overrides.subscriptionId !== undefined) {
    const id = String(overrides.subscriptionId);
    payload.data.id = id;
    payload.data.links = { self: `https://api.lemonsqueezy.com/v1/subscriptions/${id}` };
    const item = payload.data.attributes.first_subscription_item;
    if (isObject(item)) item.subscription_id = Number(id) || id;
  }
  return finish(payload, eventName, overrides);
}

/** A `data.type = "subscription-invoices"` webhook body: data.id is the invoice, attributes.subscription_id the subscription. */
export function invoicePayload(eventName: InvoicePayloadEvent | (string & {}), overrides: InvoiceOverrides = {}): Payload {
  const payload = fixture('subscription_payment_success').json;
  const defaults = (INVOICE_DEFAULTS as Record<string, JsonObject>)[eventName] ?? {};
  payload.data.attributes = { ...payload.data.attributes, updated_at: nextUpdatedAt(), ...defaults };
  if (overrides.invoiceId !== undefined) {
    payload.data.id = String(overrides.invoiceId);
    payload.data.links = { self: `https://api.lemonsqueezy.com/v1/subscription-invoices/${payload.data.id}` };
  }
  if (overrides.subscriptionId !== undefined)
    payload.data.attributes.subscription_id = Number(overrides.subscriptionId) || String(overrides.subscriptionId);
  return finish(payload, eventName, overrides);
}

function finish(payload: Payload, eventName: string, o: PayloadOverrides): Payload {
  payload.meta.event_name = eventName;
  if (o.webhookId === null) delete payload.meta.webhook_id;
  else payload.meta.webhook_id = o.webhookId ?? randomUUID();
  if (o.customData !== undefined) {
    if (o.customData === null) delete payload.meta.custom_data;
    else payload.meta.custom_data = o.customData;
  } else if (o.userId !== undefined) {
    const custom = isObject(payload.meta.custom_data) ? payload.meta.custom_data : {};
    if (o.userId === null) delete custom.user_id;
    else custom.user_id = o.userId;
    payload.meta.custom_data = custom;
  }
  payload.data.attributes = merge(payload.data.attributes, o.attributes);
  payload.meta = merge(payload.meta, o.meta);
  return payload;
}

function merge(base: JsonObject, changes: { [key: string]: Json | undefined } | undefined): JsonObject {
  const out: JsonObject = { ...base };
  for (const [key, value] of Object.entries(changes ?? {})) {
    if (value === undefined) delete out[key];
    else out[key] = value;
  }
  return out;
}

function isObject(v: Json | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The bytes to send (and sign). */
export const toBody = (payload: Payload | JsonObject): Buffer => Buffer.from(JSON.stringify(payload), 'utf8');

/** hex(HMAC-SHA256(secret, body)), as the provider computes X-Signature (written here independently of the code under test). */
export const sign = (secret: string, body: string | Uint8Array): string => createHmac('sha256', secret).update(body).digest('hex');

export interface DeliverOptions {
  /** Replaces the computed signature; null sends no X-Signature header. */
  signature?: string | null;
  /** Extra headers; null removes one of the defaults (content-type, x-event-name). */
  headers?: Record<string, string | null>;
  /** Gives up waiting for the answer (as the provider does, then retries); default: no limit of its own. */
  timeoutMs?: number;
}

export interface Delivery {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
  /** The exact bytes sent. */
  sent: Buffer;
}

/** POSTs a webhook to `<baseUrl>/webhooks/payment` the way the provider does: signed raw JSON. */
export async function deliver(
  baseUrl: string,
  secret: string,
  payload: Payload | JsonObject | Buffer | string,
  options: DeliverOptions = {},
): Promise<Delivery> {
  const sent = Buffer.isBuffer(payload) ? payload : typeof payload === 'string' ? Buffer.from(payload, 'utf8') : toBody(payload);
  const signature = options.signature === undefined ? sign(secret, sent) : options.signature;
  const eventName =
    Buffer.isBuffer(payload) || typeof payload === 'string' ? undefined : (payload.meta as JsonObject | undefined)?.event_name;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    ...(typeof eventName === 'string' ? { 'x-event-name': eventName } : {}),
    ...(signature === null ? {} : { 'x-signature': signature }),
  };
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (value === null) delete headers[name.toLowerCase()];
    else headers[name.toLowerCase()] = value;
  }
  const res = await fetch(`${baseUrl}/webhooks/payment`, {
    method: 'POST',
    headers,
    body: sent,
    ...(options.timeoutMs !== undefined ? { signal: AbortSignal.timeout(options.timeoutMs) } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, sent };
}
