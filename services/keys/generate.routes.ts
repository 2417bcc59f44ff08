import type { Express } from 'express';
import type { Db } from 'mongodb';
import { z } from 'zod';
import { publishAndApply } from '../../events/own-events.ts';
import type { EventPublisher } from '../../events/publisher.ts';
import type { Config } from '../platform/config.ts';
import { TIERS } from '../kernel/tiers.ts';
import { HttpError, badRequest, conflict, unauthorized } from '../platform/http/errors.ts';
import { noStore } from '../platform/http/no-store.ts';
import { keysEqualConstantTime } from '../platform/secrets.ts';
import { getKeyBySubscription, keysProjection } from './keys.projection.ts';
import { mintKey } from './new-key.ts';
import { identifier } from './id-input.ts';
import { expiresAtInput } from './key-lifetime.ts';
import type { GenerateAnswer } from './keys-answers.ts';

export const generateInput = z.object({
  customerId: identifier('customerId'),
  email: z
    .string({ error: 'email is required' })
    .trim()
    .toLowerCase()
    .pipe(z.email({ error: 'email is not a valid address' })),
  tier: z.enum(TIERS, { error: `tier must be one of ${TIERS.join(', ')}` }),
  subscriptionId: identifier('subscriptionId'),
  expiresAt: expiresAtInput.optional(),
});

/**
 * POST /generate: for trusted back-office callers holding WEBHOOK_SECRET. The key is in the log
 * (encrypted) and in the projection (hashed) before the caller sees it, and shown only in this answer.
 */
export function mountGenerateRoute(app: Express, deps: { config: Config; db: Db; publisher: EventPublisher }): void {
  const { config, db, publisher } = deps;
  app.post('/generate', noStore, async (req, res) => {
    const presented = /^Bearer\s+(\S+)$/i.exec(req.get('authorization') ?? '')?.[1];
    if (!presented || !keysEqualConstantTime(presented, config.secrets.webhookSecret)) {
      throw unauthorized('missing or invalid shared secret', { 'WWW-Authenticate': 'Bearer realm="svc-keys"' });
    }
    const parsed = generateInput.safeParse(req.body);
    if (!parsed.success) throw badRequest(parsed.error.issues[0]?.message ?? 'invalid request body');
    const input = parsed.data;
    if ((await getKeyBySubscription(db, input.subscriptionId))?.keyHash) throw conflict('this subscription already has a key');
    const { apiKey, event } = mintKey({ ...input, expiresAt: input.expiresAt ?? null, source: 'api' }, config.secrets.keyEncryptionKey, {
      correlationId: req.id,
    });
    await publishAndApply(publisher, db, keysProjection, [event]);
    // Two concurrent requests for one subscription: the projection adopts only the first key.
    const stored = await getKeyBySubscription(db, input.subscriptionId);
    if (stored?.keyHash !== event.data.keyHash) throw new HttpError(409, 'CONFLICT', 'this subscription already has a key');
    res.status(201).json({
      apiKey,
      tier: input.tier,
      customerId: input.customerId,
      subscriptionId: input.subscriptionId,
      createdAt: event.metadata.occurredAt.toISOString(),
      expiresAt: event.data.expiresAt?.toISOString() ?? null,
    } satisfies GenerateAnswer);
  });
}
