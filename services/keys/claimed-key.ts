import type { Db, Document } from 'mongodb';
import { projectionCollection } from '../../events/collections.ts';
import type { Effects } from '../../events/effects.ts';
import { applyEvents } from '../../events/projection.ts';
import type { EventPublisher } from '../../events/publisher.ts';
import type { Logger } from '../platform/logger.ts';
import type { KeyGenerated } from './events.ts';
import { keysProjection } from './keys.projection.ts';

/** What a key's issuer records with its claim before publishing: the key event itself (the key inside it is encrypted). */
export interface SavedKey extends Document {
  event: KeyGenerated;
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
): Promise<KeyGenerated> {
  let generated = saved?.event;
  if (!generated) {
    generated = minted;
    await deps.effects.save(effect, { event: generated });
  }
  try {
    const [position] = await deps.publisher.publishOrdered([generated]);
    // bench:webhook times the issuer's hops from this line.
    deps.log?.debug({ subscriptionId: generated.data.subscriptionId }, 'key published');
    await applyEvents(await projectionCollection(deps.db, keysProjection.collection), keysProjection, [
      { ...generated, position: position! },
    ]);
  } catch (err) {
    await deps.effects.release(effect);
    throw err;
  }
  return generated;
}
