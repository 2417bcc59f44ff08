import type { Express } from 'express';
import type { Db } from 'mongodb';
import { z } from 'zod';
import type { AccountStore } from '../accounts/account-store.ts';
import type { TokenSettings } from '../accounts/tokens.ts';
import { newEvent } from '../../events/envelope.ts';
import { publishAndApply } from '../../events/own-events.ts';
import type { EventPublisher } from '../../events/publisher.ts';
import { limitsOf } from '../kernel/tiers.ts';
import { HttpError, badRequest } from '../platform/http/errors.ts';
import type { KeyLimitsSet } from './events.ts';
import { ownedKey } from './key-owner.ts';
import type { LimitsAnswer } from './keys-answers.ts';
import { keysProjection } from './keys.projection.ts';

export const limitsOptions = z.object({
  requestsPerMinute: z
    .number({ error: 'requestsPerMinute must be a whole number, or null for the tier’s' })
    .int({ error: 'requestsPerMinute must be a whole number, or null for the tier’s' })
    .min(1, { error: 'requestsPerMinute must be at least 1' })
    .nullable()
    .describe('The key’s own limit per minute, at most its tier’s; null: the tier’s.'),
});

/**
 * POST /keys/limits: the owner gives the subscription's key a request rate of its own, under its
 * tier's (a key handed to a partner or a script that should not use the whole allowance). Checked
 * against the tier when set; applied as the lower of the two on every request, so a later downgrade
 * never leaves a key above its new tier. Kept across rotations. Authenticated as rotations are.
 */
export function mountLimitsRoute(
  app: Express,
  deps: { db: Db; publisher: EventPublisher; tokens: TokenSettings; accounts: Pick<AccountStore, 'findById' | 'isRevoked'> },
): void {
  app.post('/keys/limits', async (req, res) => {
    const options = limitsOptions.safeParse(req.body ?? {});
    if (!options.success) throw badRequest(options.error.issues[0]?.message ?? 'invalid request body');
    const record = await ownedKey(req, deps);
    if (!record.keyHash) throw new HttpError(404, 'NOT_FOUND', 'this subscription has no key yet');
    const ceiling = limitsOf(record.tier).requestsPerMinute;
    const wanted = options.data.requestsPerMinute;
    if (wanted !== null && wanted > ceiling) {
      throw badRequest(`requestsPerMinute must be at most ${ceiling}, the ${record.tier} tier’s`);
    }
    const event: KeyLimitsSet = newEvent(
      'key.limits-set',
      { keyHash: record.keyHash, subscriptionId: record.subscriptionId, requestsPerMinute: wanted },
      { correlationId: req.id },
    );
    await publishAndApply(deps.publisher, deps.db, keysProjection, [event]);
    res.json({
      subscriptionId: record.subscriptionId,
      last4: record.last4,
      requestsPerMinute: wanted,
      tierRequestsPerMinute: ceiling,
    } satisfies LimitsAnswer);
  });
}
