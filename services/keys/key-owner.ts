import type { Request } from 'express';
import type { Db } from 'mongodb';
import { z } from 'zod';
import type { AccountStore } from '../accounts/account-store.ts';
import { authenticate } from '../accounts/session.ts';
import type { TokenSettings } from '../accounts/tokens.ts';
import { projectedFields } from '../../events/projection.ts';
import { HttpError, badRequest, unauthorized } from '../platform/http/errors.ts';
import { KEY_PREFIX, hashKey } from './key-format.ts';
import { hasExpired } from './assess.ts';
import { findStoredKey, getKeyBySubscription, type KeyRecord } from './keys.projection.ts';
import { identifier } from './id-input.ts';

const CHALLENGE = { 'WWW-Authenticate': 'Bearer realm="svc-keys"' };
export const accountInput = z.object({ subscriptionId: identifier('subscriptionId') });

/**
 * Whose key a request may act on. Either the key itself (`X-API-Key`, or `Authorization: Bearer
 * svc_…`), which names its subscription and must be its current, unrevoked key; or the account's
 * session (`Authorization: Bearer <token>` from /auth/login, checked as the accounts service checks
 * it: JWT_SECRET, issuer, audience, and a password change revokes it) with `{subscriptionId}`, which
 * must belong to that account: the subscription's userId is the account's, or, for a subscription
 * billing could not link to an account, its e-mail is the account's verified address (the e-mail
 * match billing itself uses to link them). The session is the way back for a key that is lost or revoked.
 */
export async function ownedKey(
  req: Request,
  deps: { db: Db; tokens: TokenSettings; accounts: Pick<AccountStore, 'findById' | 'isRevoked'> },
  /** Where {subscriptionId} is read from: the body, or a GET's query. */
  input: unknown = req.body,
  /** With an account token, who else besides the owner may act on the subscription (GET /audit: its team's members). */
  options: { alsoAdmits?: (record: KeyRecord, account: { userId: string }) => Promise<boolean> } = {},
): Promise<KeyRecord> {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.get('authorization') ?? '')?.[1];
  const apiKey = req.get('x-api-key') ?? (bearer?.startsWith(KEY_PREFIX) ? bearer : undefined);
  if (apiKey !== undefined) {
    const keyHash = hashKey(apiKey);
    const record = projectedFields<KeyRecord>(await findStoredKey(deps.db, keyHash));
    if (record?.keyHash !== keyHash || record.status !== 'active' || hasExpired(record)) {
      throw unauthorized('invalid, replaced, expired or revoked API key', CHALLENGE);
    }
    return record;
  }
  if (!bearer) throw unauthorized('missing credentials (X-API-Key: <API_KEY>, or Authorization: Bearer <account token>)', CHALLENGE);
  const { account } = await authenticate(req, deps.tokens, deps.accounts);
  const parsed = accountInput.safeParse(input ?? {});
  if (!parsed.success) throw badRequest(parsed.error.issues[0]?.message ?? 'invalid request body');
  const record = await getKeyBySubscription(deps.db, parsed.data.subscriptionId);
  // Someone else's subscription reads as absent: the answer does not tell which ids exist.
  const admitted = record !== null && (ownedBy(record, account) || (await options.alsoAdmits?.(record, account)) === true);
  if (!admitted) throw new HttpError(404, 'NOT_FOUND', 'no subscription of this account has that id');
  return record;
}

/**
 * Whether the account owns the subscription: billing linked it to this account, or (not linked) it is
 * under the account's e-mail, the match billing itself uses to link them, and only once the account
 * has verified that address: signing up first with someone's address owns nothing they buy. Read
 * at each request, so a verification takes effect at once and a replay answers the same.
 */
export function ownedBy(
  record: Pick<KeyRecord, 'userId' | 'email'>,
  account: { userId: string; email: string; emailVerifiedAt?: Date | null | undefined },
): boolean {
  if (record.userId) return record.userId === account.userId;
  if (!account.emailVerifiedAt) return false;
  return record.email !== null && record.email.trim().toLowerCase() === account.email.trim().toLowerCase();
}
