import type { z } from 'zod';
import type { Response } from 'express';
import type { Admitted, KeyGate } from '../keys/gate.ts';
import { ragError, type Caller } from './caller.ts';

/** A request body as typed input, or 400 with the first problem in words. */
export function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const message =
    issue?.code === 'invalid_type' && issue.path.length === 0
      ? 'request body must be a JSON object'
      : (issue?.message ?? 'invalid request body');
  throw ragError(400, 'BAD_REQUEST', message);
}

/** Who a gated request acts for: the key's customer, its hash and its quotas as the gate saw them. */
export const callerOf = ({ identity, usage, reserve }: Admitted): Caller => ({
  // A key issued without a customer is a customer of its own: it must not share the empty id's collections.
  customerId: identity.customerId || `key-${identity.keyHash.slice(0, 32)}`,
  keyHash: identity.keyHash,
  keyLast4: identity.last4 ?? null,
  memberUserId: identity.memberUserId ?? null,
  tier: identity.tier,
  usage,
  reserve,
});

/**
 * The gate's check (key, subscription, rate) for an operation that meters itself: the quota is the
 * operation's to check, so a free key hears "subscription required", not that a quota of 0 is used up.
 */
export const admitter =
  (gate: KeyGate) =>
  (req: Parameters<KeyGate['authorize']>[0], res: Response, apiKey?: string): Promise<Admitted | null> =>
    gate.authorize(req, res, { metric: 'queries', amount: 0 }, apiKey);
