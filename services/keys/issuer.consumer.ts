import type { Db, Document } from 'mongodb';
import { eachEventOf, type EventHandler } from '../../events/consumer.ts';
import type { Effects } from '../../events/effects.ts';
import { derivedEventId } from '../../events/envelope.ts';
import { publishAndApply } from '../../events/own-events.ts';
import type { EventPublisher } from '../../events/publisher.ts';
import type { SubscriptionCreated } from '../billing/events.ts';
import type { Logger } from '../platform/logger.ts';
import type { KeyGenerated } from './events.ts';
import { getKeyBySubscription, keysProjection } from './keys.projection.ts';
import { mintKey } from './new-key.ts';

/** What the issuer records before publishing: the key event itself (the key inside it is encrypted). */
interface SavedKey extends Document {
  event: KeyGenerated;
}

/**
 * subscription.created -> one API key per subscription. The key exists only in this function's
 * memory, in the hash stored by the projection, and encrypted inside key.generated for the mailer.
 *
 * The minted event is saved in the effect record before it is published: a process that dies
 * after publishing but before recording it done is taken over by one that publishes the same
 * event again (same id, same key), never a second key.
 */
export function issuerHandler(deps: { db: Db; publisher: EventPublisher; effects: Effects<SavedKey>; encryptionKey: Buffer; log: Logger }): EventHandler {
  const { db, publisher, effects, encryptionKey, log } = deps;
  return eachEventOf<SubscriptionCreated>(['subscription.created'], async (event) => {
    const s = event.data;
    const effect = `issue-key:${s.subscriptionId}`;
    if ((await getKeyBySubscription(db, s.subscriptionId))?.keyHash) return;
    const claim = await effects.claim(effect);
    if (claim.outcome === 'done') return;
    let generated = claim.saved?.event;
    if (!generated) {
      generated = mintKey(
        { tier: s.tier, customerId: s.customerId, subscriptionId: s.subscriptionId, email: s.email, source: 'subscription' },
        encryptionKey,
        { causedBy: event.metadata, eventId: derivedEventId(`${event.metadata.eventId}:key`) },
      ).event;
      await effects.save(effect, { event: generated });
    }
    try {
      await publishAndApply(publisher, db, keysProjection, [generated]);
    } catch (err) {
      await effects.release(effect);
      throw err;
    }
    await effects.done(effect);
    log.info({ subscriptionId: s.subscriptionId, takenOver: claim.attempts > 1 }, 'API key issued');
  });
}
