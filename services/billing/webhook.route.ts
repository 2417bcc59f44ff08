import { createHash } from 'node:crypto';
import express, { type Express } from 'express';
import { newEvent } from '../../events/envelope.ts';
import type { EventPublisher } from '../../events/publisher.ts';
import { HttpError, badRequest, unauthorized } from '../platform/http/errors.ts';
import type { PaymentWebhookReceived } from './events.ts';
import { parseProviderEvent, readEnvelope } from './provider-payload.ts';
import { SIGNATURE_HEADER, verifySignature } from './signature.ts';

export const PAYMENT_WEBHOOK_PATH = '/webhooks/payment';

export interface WebhookDeps {
  /** config.secrets.paymentWebhookSecret: used to verify, never logged or returned. */
  secret: string;
  publisher: Pick<EventPublisher, 'publish'>;
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

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * POST /webhooks/payment: verify, check the shape, record. Recording is the whole job: the body
 * goes to Kafka as one `payment.webhook-received` and billing acts on it from there, so the
 * provider's 200 means "in the log", and a 503 (Kafka unavailable) makes it retry later.
 */
export function mountWebhookRoute(app: Express, deps: WebhookDeps): void {
  const now = deps.now ?? (() => new Date());

  app.post(PAYMENT_WEBHOOK_PATH, async (req, res) => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const signature = req.get(SIGNATURE_HEADER);
    if (!signature) throw unauthorized('missing X-Signature header');
    if (!verifySignature(deps.secret, raw, signature)) throw unauthorized('invalid signature');

    let text: string;
    let body: unknown;
    try {
      // JSON is UTF-8 (RFC 8259); decoding strictly keeps the recorded body byte-for-byte what was signed.
      text = utf8.decode(raw);
      body = JSON.parse(text);
    } catch {
      throw new HttpError(400, 'MALFORMED_JSON', 'request body is not valid JSON');
    }

    // A provider without meta.webhook_id still gets a stable id: its redelivery has the same bytes.
    const envelope = readEnvelope(body, createHash('sha256').update(raw).digest('hex'));
    if ('error' in envelope) throw badRequest(envelope.error);
    const parsed = parseProviderEvent(body, envelope.webhookId);
    if ('error' in parsed) throw badRequest(parsed.error);
    // Ignored events are recorded too: the log keeps everything the provider told us.
    const ignored = 'ignored' in parsed;

    const event: PaymentWebhookReceived = newEvent(
      'payment.webhook-received',
      { webhookId: envelope.webhookId, eventName: envelope.eventName, subscriptionId: envelope.subscriptionId, receivedAt: now(), body: text },
      { correlationId: req.id },
    );
    await deps.publisher.publish(event);
    req.log.info({ webhookId: envelope.webhookId, eventName: envelope.eventName, subscriptionId: envelope.subscriptionId, ignored }, 'payment webhook recorded');
    res.json(ignored ? { received: true, ignored: true } : { received: true });
  });
}
