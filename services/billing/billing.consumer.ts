import type { Db } from 'mongodb';
import { eachEventOf, type EventHandler } from '../../events/consumer.ts';
import { derivedEventId, eventMetadata, type Event } from '../../events/envelope.ts';
import { PoisonMessageError } from '../../events/errors.ts';
import { projectionCollection } from '../../events/collections.ts';
import { publishAndApply } from '../../events/own-events.ts';
import { findStored, projectedFields } from '../../events/projection.ts';
import type { EventPublisher } from '../../events/publisher.ts';
import { findUserIdByEmail } from '../accounts/users.projection.ts';
import type { Tier } from '../kernel/tiers.ts';
import type { Logger } from '../platform/logger.ts';
import type { PaymentWebhookReceived, SubscriptionEvent, SubscriptionEventData } from './events.ts';
import { isSubscriptionEventName } from './provider-event.ts';
import { UNREADABLE_EVENT_NAME, parseProviderEvent } from './provider-payload.ts';
import { decide, initialState, type SubscriptionState } from './subscription.ts';
import { subscriptionsProjection } from './subscriptions.projection.ts';

/** Wraps decided event data with ids derived from the cause, so deciding again yields the same events. */
export function asEvents(decided: readonly SubscriptionEventData[], cause: Pick<Event, 'metadata'>, seed: string): SubscriptionEvent[] {
  return decided.map((d, i) => ({ ...d, metadata: eventMetadata({ causedBy: cause.metadata, eventId: derivedEventId(`${seed}:${i}`) }) }));
}

/** payments.webhooks -> the subscription decider -> subscriptions.events. */
export function billingHandler(deps: {
  db: Db;
  publisher: EventPublisher;
  variantTiers: ReadonlyMap<string, Tier>;
  log: Logger;
}): EventHandler {
  const { db, publisher, variantTiers, log } = deps;
  return eachEventOf<PaymentWebhookReceived>(['payment.webhook-received'], async (event) => {
    const webhook = event.data;
    if (webhook.ignoredBecause !== null) return;
    // Other provider events are recorded in the log and need no action; a body without a
    // readable event name is one nobody can act on until ops look at it.
    if (webhook.eventName !== UNREADABLE_EVENT_NAME && !isSubscriptionEventName(webhook.eventName)) return;
    let body: unknown;
    try {
      body = JSON.parse(webhook.body);
    } catch {
      throw new PoisonMessageError(`webhook ${webhook.webhookId}: body is not JSON`);
    }
    const parsed = parseProviderEvent(body, webhook.webhookId);
    if ('error' in parsed) throw new PoisonMessageError(`webhook ${webhook.webhookId}: ${parsed.error}`);
    if ('ignored' in parsed) return;
    // The account behind an e-mail is read beside the state (one round trip, not two) whenever it
    // may be needed; it is used only if the subscription does not know its account yet.
    const lookUpUser = parsed.kind === 'subscription' && parsed.userId === null;
    const collection = await projectionCollection(db, subscriptionsProjection.collection);
    // No stored id holds a NUL, and FerretDB fails such a lookup instead of finding nothing.
    const readable = !parsed.subscriptionId.includes('\u0000');
    const [stored, userByEmail] = await Promise.all([
      readable ? findStored(collection, { _id: parsed.subscriptionId }) : null,
      lookUpUser ? findUserIdByEmail(db, parsed.email.trim().toLowerCase()) : undefined,
    ]);
    const state = projectedFields<SubscriptionState>(stored) ?? initialState();
    const input = lookUpUser && state.userId === null ? { ...parsed, userId: userByEmail ?? null } : parsed;
    const decided = decide({ type: 'ApplyProviderEvent', event: input, variantTiers }, state);
    const events = asEvents(decided, event, event.metadata.eventId);
    // The document read to decide is the write's base: applying costs one write (issue 37). The
    // timing line between the two steps is where the issuer starts (bench:webhook).
    await publishAndApply(publisher, db, subscriptionsProjection, events, {
      read: readable ? new Map([[parsed.subscriptionId, stored]]) : undefined,
      published: () => log.debug({ subscriptionId: parsed.subscriptionId }, 'subscription published'),
    });
    if (decided.length > 0)
      log.info({ subscriptionId: parsed.subscriptionId, decided: decided.map((d) => d.type) }, 'subscription changed');
  });
}
