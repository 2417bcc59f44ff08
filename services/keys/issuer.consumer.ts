import type { Db } from 'mongodb';
import { appliedHere } from '../../events/applied-here.ts';
import { projectionCollection } from '../../events/collections.ts';
import { eachEventOf, type EventHandler } from '../../events/consumer.ts';
import type { Effects } from '../../events/effects.ts';
import { derivedEventId, type DeliveredEvent } from '../../events/envelope.ts';
import { findStored, projectedFields } from '../../events/projection.ts';
import type { EventPublisher } from '../../events/publisher.ts';
import type { SubscriptionCreated } from '../billing/events.ts';
import type { Logger } from '../platform/logger.ts';
import { keysProjection, type KeyRecord } from './keys.projection.ts';
import { mintKey } from './new-key.ts';
import { publishClaimedKey, type SavedKey } from './claimed-key.ts';

/**
 * subscription.created -> one API key per subscription. The key exists only in this function's
 * memory, in the hash stored by the projection, and encrypted inside key.generated for the mailer.
 *
 * The minted event is saved in the effect record before it is published: a process that dies
 * after publishing but before recording it done is taken over by one that publishes the same
 * event again (same id, same key), never a second key.
 */
export function issuerHandler(deps: {
  db: Db;
  publisher: EventPublisher;
  effects: Effects<SavedKey>;
  encryptionKey: Buffer;
  log: Logger;
}): EventHandler {
  const { db, publisher, effects, encryptionKey, log } = deps;
  return eachEventOf<SubscriptionCreated>(['subscription.created'], async (event) => {
    // The keys projection's consumer in this process waits for the write below, which applies this
    // subscription.created with the key, instead of writing the document too (AppliedHere).
    await appliedHere.during(keysProjection.collection, [event], () => issue(event));
  });

  async function issue(event: DeliveredEvent<SubscriptionCreated>): Promise<void> {
    const s = event.data;
    const effect = `issue-key:${s.subscriptionId}`;
    // Minted before the claim (microseconds) so it is saved with the claim in one write; a claim
    // taken over from a crashed owner returns the key that owner saved, and this one is dropped.
    const minted = mintKey(
      { tier: s.tier, customerId: s.customerId, subscriptionId: s.subscriptionId, email: s.email, source: 'subscription' },
      encryptionKey,
      { causedBy: event.metadata, eventId: derivedEventId(`${event.metadata.eventId}:key`) },
    ).event;
    // The keys document is read beside the claim (one round trip, not two): it says whether the
    // subscription has its key already, and it is the base of the write that adds the key.
    const keys = await projectionCollection(db, keysProjection.collection);
    // No stored id holds a NUL, and FerretDB fails such a lookup instead of finding nothing.
    const readable = !s.subscriptionId.includes('\u0000');
    const [existing, claimed] = await Promise.allSettled([
      readable ? findStored(keys, { _id: s.subscriptionId }) : null,
      effects.claim(effect, { event: minted }),
    ]);
    if (existing.status === 'rejected') {
      if (claimed.status === 'fulfilled' && claimed.value.outcome === 'owned') await effects.release(effect);
      throw existing.reason;
    }
    if (projectedFields<KeyRecord>(existing.value)?.keyHash) {
      // It has its key: the effect is done whoever made it (a claim just taken is closed, not left to expire).
      if (claimed.status === 'fulfilled' && claimed.value.outcome === 'owned') await effects.done(effect);
      return;
    }
    if (claimed.status === 'rejected') throw claimed.reason;
    const claim = claimed.value;
    if (claim.outcome === 'done') return;
    await publishClaimedKey({ db, publisher, effects, log }, effect, claim.saved, minted, { read: existing.value, before: [event] });
    log.info({ subscriptionId: s.subscriptionId, takenOver: claim.attempts > 1 }, 'API key issued');
    await effects.done(effect);
  }
}
