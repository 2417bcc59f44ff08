import type { Express } from 'express';
import type { Db } from 'mongodb';
import { z } from 'zod';
import { newEvent } from '../../events/envelope.ts';
import { publishAndApply } from '../../events/own-events.ts';
import type { EventPublisher } from '../../events/publisher.ts';
import type { Config } from '../platform/config.ts';
import { HttpError, badRequest, unauthorized } from '../platform/http/errors.ts';
import type { KeyRevoked } from './events.ts';
import { keysEqualConstantTime } from '../platform/secrets.ts';
import { getKeyBySubscription, keysProjection } from './keys.projection.ts';
import { identifier } from './id-input.ts';
import type { RevokeAnswer } from './keys-answers.ts';

export const revokeInput = z.object({ subscriptionId: identifier('subscriptionId'), reason: z.string().max(200).optional() });

/** POST /revoke (shared secret): the subscription's key stops working everywhere within a second. */
export function mountRevokeRoute(app: Express, deps: { config: Config; db: Db; publisher: EventPublisher }): void {
  app.post('/revoke', async (req, res) => {
    const presented = /^Bearer\s+(\S+)$/i.exec(req.get('authorization') ?? '')?.[1];
    if (!presented || !keysEqualConstantTime(presented, deps.config.secrets.webhookSecret))
      throw unauthorized('missing or invalid shared secret');
    const parsed = revokeInput.safeParse(req.body);
    if (!parsed.success) throw badRequest(parsed.error.issues[0]?.message ?? 'invalid request body');
    const record = await getKeyBySubscription(deps.db, parsed.data.subscriptionId);
    if (!record?.keyHash) throw new HttpError(404, 'NOT_FOUND', 'this subscription has no key');
    const event: KeyRevoked = newEvent(
      'key.revoked',
      { keyHash: record.keyHash, subscriptionId: record.subscriptionId, reason: parsed.data.reason ?? 'revoked by operator' },
      { correlationId: req.id },
    );
    await publishAndApply(deps.publisher, deps.db, keysProjection, [event]);
    res.json({ revoked: true, subscriptionId: record.subscriptionId, last4: record.last4 } satisfies RevokeAnswer);
  });
}
