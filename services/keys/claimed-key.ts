import type { Db, Document } from 'mongodb';
import type { DeliveredEvent } from '../../events/envelope.ts';
import { appliedHere } from '../../events/applied-here.ts';
import { projectionCollection } from '../../events/collections.ts';
import type { Effects } from '../../events/effects.ts';
import { applyEvents, findStored, type StoredDocument } from '../../events/projection.ts';
import type { EventPublisher } from '../../events/publisher.ts';
import type { Logger } from '../platform/logger.ts';
import type { KeyGenerated } from './events.ts';
import { keysProjection } from './keys.projection.ts';

/** What a key's issuer records with its claim before publishing: the key event itself (the key inside it is encrypted). */
export interface SavedKey extends Document {
  event: KeyGenerated;
}

/** What the caller of publishClaimedKey knows already about the keys document. */
export interface KeysDocumentInHand {
  /** The stored document as the caller read it before claiming (null: not there): no read while publishing. */
  read: StoredDocument<Document> | null;
  /** Events of the keys projection, at their positions, to apply in the same write before the key (the subscription.created it answers). */
  before: readonly DeliveredEvent[];
}

/**
 * Publishes the key of an effect this process holds: the one an earlier owner saved with the claim
 * (a crashed issuer's, so the same key and event id go out again, never a second key), else this
 * one, saved first. Applied to the keys projection at its real position at once, so /validate knows
 * the key before the mailer, which waits for it, sends it. The claim is released if publishing fails.
 */
export async function publishClaimedKey(
  deps: { db: Db; publisher: Pick<EventPublisher, 'publishOrdered'>; effects: Effects<SavedKey>; log?: Logger },
  effect: string,
  saved: SavedKey | undefined,
  minted: KeyGenerated,
  inHand?: KeysDocumentInHand,
): Promise<KeyGenerated> {
  const event = saved?.event ?? minted;
  if (!saved?.event) await deps.effects.save(effect, { event });
  // The keys projection's consumer in this process waits for this write instead of racing it.
  await appliedHere.during(keysProjection.collection, [event], async () => {
    try {
      // The keys document is read while the event is published, so applying it after is one write,
      // not a read and a write: the mailer waits for it before sending the key (issue 37).
      const collection = await projectionCollection(deps.db, keysProjection.collection);
      const id = event.data.subscriptionId;
      const [[position], before] = await Promise.all([
        deps.publisher.publishOrdered([event]),
        inHand ? inHand.read : findStored(collection, { _id: id }),
      ]);
      // bench:webhook times the issuer's hops from this line.
      deps.log?.debug({ subscriptionId: id }, 'key published');
      const events = [...(inHand?.before ?? []), { ...event, position: position! }];
      await applyEvents(collection, keysProjection, events, undefined, new Map([[id, before]]));
    } catch (err) {
      await deps.effects.release(effect);
      throw err;
    }
  });
  return event;
}
