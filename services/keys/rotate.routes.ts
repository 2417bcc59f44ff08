import type { Express } from 'express';
import type { AccountStore } from '../accounts/account-store.ts';
import type { TokenSettings } from '../accounts/tokens.ts';
import type { Db, Document } from 'mongodb';
import { EffectBusy, Effects } from '../../events/effects.ts';
import { publishAndApply } from '../../events/own-events.ts';
import type { EventPublisher } from '../../events/publisher.ts';
import type { Logger } from '../platform/logger.ts';
import { HttpError, badRequest, conflict } from '../platform/http/errors.ts';
import { noStore } from '../platform/http/no-store.ts';
import type { KeyGenerated } from './events.ts';
import { rotateOptions } from './key-lifetime.ts';
import { ownedKey } from './key-owner.ts';
import type { RotateAnswer } from './keys-answers.ts';
import { getKeyBySubscription, keysProjection } from './keys.projection.ts';
import { mintKey } from './new-key.ts';
import type { RotationLimit } from './rotation-limit.ts';

interface SavedRotation extends Document {
  event: KeyGenerated;
}

/**
 * POST /keys/rotate: the owner replaces the subscription's key. One key.generated of the next
 * generation does it all: the keys projection and every process's key cache adopt the new key and
 * so stop knowing the old one as soon as the event reaches them (within a second), and the mailer
 * sends the new key, once, to the subscription's address. No separate key.revoked: it would sit on
 * the old key's partition, so it could arrive before or after the new key, and a half-published
 * pair could revoke a key without replacing it.
 *
 * *Choice:* the new key is only in the e-mail, never in this answer. Whoever rotates with a leaked
 * key or a stolen session then cannot take the subscription over: the key goes to the address on
 * the subscription, as the first one did.
 *
 * The replaced key keeps working beside the new one for a grace period (graceSeconds, default
 * KEY_ROTATION_GRACE_SECONDS), so the deployments that hold it can change over without an outage;
 * 0 stops it at once, which is what a rotation after a leak wants. Only the key just replaced gets
 * one: a second rotation ends the first one's grace.
 */
export function mountRotateRoute(
  app: Express,
  deps: {
    db: Db;
    publisher: EventPublisher;
    tokens: TokenSettings;
    accounts: Pick<AccountStore, 'findById' | 'isRevoked'>;
    encryptionKey: Buffer;
    limit: RotationLimit;
    /** KEY_ROTATION_GRACE_SECONDS: the grace period of a rotation that does not name one. */
    graceSeconds: number;
    leaseMs: number;
    log: Logger;
  },
): void {
  const { db, publisher, limit, log } = deps;
  app.post('/keys/rotate', noStore, async (req, res) => {
    const options = rotateOptions.safeParse(req.body ?? {});
    if (!options.success) throw badRequest(options.error.issues[0]?.message ?? 'invalid request body');
    const record = await ownedKey(req, deps);
    const oldHash = record.keyHash;
    if (!oldHash) throw new HttpError(404, 'NOT_FOUND', 'this subscription has no key yet');
    if (!record.email) throw conflict('this subscription has no e-mail address to send a new key to');
    const allowance = await limit.take(record.subscriptionId);
    if (!allowance.allowed) {
      throw new HttpError(429, 'RATE_LIMITED', 'too many key rotations for this subscription; try again later', {
        headers: { 'Retry-After': String(Math.max(1, Math.ceil(allowance.retryAfterMs / 1000))) },
      });
    }
    // Named after the key being replaced, so each key is replaced once; an owner per request, so two
    // concurrent requests in one process do not both hold it.
    const effects = new Effects<SavedRotation>(db, { leaseMs: deps.leaseMs });
    const effect = `rotate-key:${record.subscriptionId}:${oldHash}`;
    let claim;
    try {
      claim = await effects.claim(effect);
    } catch (err) {
      if (err instanceof EffectBusy) throw conflict('this key is being replaced already');
      throw err;
    }
    if (claim.outcome === 'done') throw conflict('this key has been replaced already');
    // A request that died after saving its key is finished with the same key, never a second one.
    let event = claim.saved?.event;
    if (!event) {
      const graceMs = (options.data.graceSeconds ?? deps.graceSeconds) * 1000;
      event = mintKey(
        {
          tier: record.tier,
          customerId: record.customerId ?? '',
          subscriptionId: record.subscriptionId,
          email: record.email,
          source: 'rotation',
          generation: (record.generation ?? 0) + 1,
          replacesLast4: record.last4,
          expiresAt: options.data.expiresAt ?? null,
          previousValidUntil: graceMs > 0 ? new Date(Date.now() + graceMs) : null,
        },
        deps.encryptionKey,
        { correlationId: req.id },
      ).event;
      await effects.save(effect, { event });
    }
    try {
      await publishAndApply(publisher, db, keysProjection, [event]);
    } catch (err) {
      await effects.release(effect).catch(() => undefined);
      throw err;
    }
    await effects.done(effect);
    const stored = await getKeyBySubscription(db, record.subscriptionId);
    if (stored?.keyHash !== event.data.keyHash) throw conflict('this key has been replaced already');
    log.info({ subscriptionId: record.subscriptionId, generation: event.data.generation }, 'API key rotated');
    res.json({
      rotated: true,
      subscriptionId: record.subscriptionId,
      replacedLast4: record.last4,
      last4: event.data.last4,
      delivery: 'email',
      createdAt: event.metadata.occurredAt.toISOString(),
      expiresAt: event.data.expiresAt?.toISOString() ?? null,
      replacedValidUntil: event.data.previousValidUntil?.toISOString() ?? null,
    } satisfies RotateAnswer);
  });
}
