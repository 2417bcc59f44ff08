import type { Db, Document } from 'mongodb';
import type { EventHandler } from '../../events/consumer.ts';
import { derivedEventId, type DeliveredEvent } from '../../events/envelope.ts';
import { publishAndApply } from '../../events/own-events.ts';
import type { Projection } from '../../events/projection.ts';
import type { EventPublisher } from '../../events/publisher.ts';
import type { SubscriptionCreatedData } from '../billing/events.ts';
import type { Effects } from '../mailer/effects.ts';
import type { Logger } from '../platform/logger.ts';
import { getKeyBySubscription, keysProjection } from './keys.projection.ts';
import { mintKey } from './new-key.ts';

/**
 * subscription.created -> one API key per subscription. The key exists only in this function's
 * memory, in the hash stored by the projection, and encrypted inside key.generated for the mailer.
 */
export function issuerHandler(deps: { db: Db; publisher: EventPublisher; effects: Effects; encryptionKey: Buffer; log: Logger }): EventHandler {
  const { db, publisher, effects, encryptionKey, log } = deps;
  return {
    async handle(events: readonly DeliveredEvent[]) {
      for (const event of events) {
        if (event.type !== 'subscription.created') continue;
        const s = event.data as SubscriptionCreatedData;
        const effect = `issue-key:${s.subscriptionId}`;
        if ((await getKeyBySubscription(db, s.subscriptionId))?.keyHash) continue;
        if (!(await effects.claim(effect))) continue;
        try {
          const { event: generated } = mintKey(
            { tier: s.tier, customerId: s.customerId, subscriptionId: s.subscriptionId, email: s.email, source: 'subscription' },
            encryptionKey,
            { causedBy: event.metadata, eventId: derivedEventId(`${event.metadata.eventId}:key`) },
          );
          await publishAndApply(publisher, db, keysProjection as unknown as Projection<Document>, [generated]);
        } catch (err) {
          await effects.release(effect);
          throw err;
        }
        await effects.done(effect);
        log.info({ subscriptionId: s.subscriptionId }, 'API key issued');
      }
    },
  };
}
