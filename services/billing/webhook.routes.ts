import { createHash } from 'node:crypto';
import express, { type Express } from 'express';
import { newEvent } from '../../events/envelope.ts';
import type { EventPublisher } from '../../events/publisher.ts';
import { unauthorized } from '../platform/http/errors.ts';
import type { PaymentWebhookReceived } from './events.ts';
import { isSubscriptionEventName } from './provider-event.ts';
import { UNREADABLE_EVENT_NAME, readEnvelope, subscriptionIdOf, type WebhookEnvelope } from './provider-payload.ts';
import { countWebhook } from './metrics.ts';
import { SIGNATURE_HEADER, verifySignature } from './signature.ts';
import type { WebhookAnswer } from './webhook.api.ts';
import { ignoredBecause, type WebhookScope } from './webhook-scope.ts';

export const PAYMENT_WEBHOOK_PATH = '/webhooks/payment';

export interface WebhookDeps {
  /** config.secrets.paymentWebhookSecret: used to verify, never logged or returned. */
  secret: string;
  publisher: Pick<EventPublisher, 'publish'>;
  /** Which store and mode billing acts on; the decision is recorded with the webhook. */
  scope: WebhookScope;
  now?: () => Date;
}

/**
 * The signature covers the exact bytes sent, so this path reads its body raw, before the app's
 * JSON parser (which then leaves it alone: the body is already read). Any content type is read,
 * even none, so a sender's header cannot make the signature check see an empty body.
 * Too large a body fails here with body-parser's 'entity.too.large': the app answers 413.
 */
export function mountRawWebhookBody(app: Express, bodyLimit: string): void {
  app.post(PAYMENT_WEBHOOK_PATH, express.raw({ type: () => true, limit: bodyLimit }));
}

// Not fatal: a signed body is recorded whatever it holds; billing dead-letters what it cannot read.
const utf8 = new TextDecoder('utf-8');

/**
 * POST /webhooks/payment: verify, record, answer. Once the signature holds, the body is the
 * provider's word and is recorded as it came, whatever its shape: the provider stops retrying after
 * a 4xx, so refusing a body we cannot use would lose it. Billing parses it from the log; a body it
 * cannot use lands in the dead-letter topic with the reason, where ops see it and re-drive it after
 * a fix (`svc dlq`). The provider's 200 means "in the log"; a 503 (Kafka unavailable) makes it retry.
 */
export function mountWebhookRoute(app: Express, deps: WebhookDeps): void {
  const now = deps.now ?? (() => new Date());

  app.post(PAYMENT_WEBHOOK_PATH, async (req, res) => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const signature = req.get(SIGNATURE_HEADER);
    if (!signature) {
      countWebhook(null, 'unsigned');
      throw unauthorized('missing X-Signature header');
    }
    if (!verifySignature(deps.secret, raw, signature)) {
      countWebhook(null, 'bad_signature');
      throw unauthorized('invalid signature');
    }

    const text = utf8.decode(raw);
    const body = parsedJson(text);
    // A provider without meta.webhook_id still gets a stable id: its redelivery has the same bytes.
    const envelope = recordedEnvelope(body, createHash('sha256').update(raw).digest('hex'));
    // Out of scope is still answered 200 and recorded: a 4xx would only make the provider retry
    // the same event, and the record shows ops what came in and why nothing followed.
    const outOfScope = ignoredBecause(body, deps.scope);
    const event: PaymentWebhookReceived = newEvent(
      'payment.webhook-received',
      {
        webhookId: envelope.webhookId,
        eventName: envelope.eventName,
        subscriptionId: envelope.subscriptionId,
        receivedAt: now(),
        body: text,
        ignoredBecause: outOfScope,
      },
      { correlationId: req.id },
    );
    await deps.publisher.publish(event).catch((err: unknown) => {
      countWebhook(envelope.eventName, 'unrecorded');
      throw err;
    });
    const ignored = outOfScope !== null || !isSubscriptionEventName(envelope.eventName);
    countWebhook(envelope.eventName, outOfScope ? 'out_of_scope' : ignored ? 'ignored' : 'recorded');
    req.log.info(
      {
        webhookId: envelope.webhookId,
        eventName: envelope.eventName,
        subscriptionId: envelope.subscriptionId,
        ignored,
        ignoredBecause: outOfScope,
      },
      'payment webhook recorded',
    );
    const answer: WebhookAnswer = outOfScope
      ? { received: true, ignored: true, reason: outOfScope }
      : ignored
        ? { received: true, ignored: true }
        : { received: true };
    res.json(answer);
  });
}

const NOT_JSON = Symbol('not JSON');

function parsedJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return NOT_JSON;
  }
}

/** The event name, webhook id and subscription of a body, as far as it has them: enough to record and partition it. */
function recordedEnvelope(body: unknown, fallbackId: string): WebhookEnvelope {
  if (body === NOT_JSON) return { eventName: UNREADABLE_EVENT_NAME, webhookId: fallbackId, subscriptionId: null };
  const envelope = readEnvelope(body, fallbackId);
  return 'error' in envelope
    ? { eventName: UNREADABLE_EVENT_NAME, webhookId: fallbackId, subscriptionId: subscriptionIdOf(body) }
    : envelope;
}
