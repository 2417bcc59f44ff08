import type { Express } from 'express';
import type { Db } from 'mongodb';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { projectionCollection } from '../../events/collections.ts';
import { applyEvents } from '../../events/projection.ts';
import { clientIpKey } from '../platform/http/client-ip.ts';
import { HttpError, badRequest, conflict } from '../platform/http/errors.ts';
import { noStore } from '../platform/http/no-store.ts';
import type { AccountRecord, AccountStore } from './account-store.ts';
import { VERIFY_PATH, VERIFY_RESEND_PATH, type VerificationAnswer, verifyInput } from './email-verification-input.ts';
import { checkVerification, issueVerification, verificationTokenHash } from './email-verification.ts';
import { consumeOrLimit } from './rate-limited.ts';
import { authenticate } from './session.ts';
import type { TokenSettings } from './tokens.ts';
import { usersProjection } from './users.projection.ts';

/** Each resend is an e-mail to the account's address: a few an hour is all a person needs. */
export const RESENDS_PER_ACCOUNT_PER_HOUR = 3;
export const RESENDS_PER_IP_PER_HOUR = 20;

type Limiter = Pick<RateLimiterAbstract, 'consume'>;

export interface VerificationDeps {
  db: Db;
  tokens: TokenSettings;
  store: AccountStore;
  keyEncryptionKey: Buffer;
  /** Resends per account and per client address (each is an e-mail to the account's address), shared by every replica. */
  resendsPerAccount: Limiter;
  resendsPerIp: Limiter;
}

// One answer for every link that does not verify this account: no link, a used one, one replaced by
// a resend, another account's, or a forged one. It tells nothing about what the account holds.
const invalidLink = () =>
  new HttpError(
    400,
    'INVALID_LINK',
    'this link does not verify this account (used, replaced by a newer one, or not its own); ask for a new one',
  );

const verifiedOf = (account: AccountRecord): VerificationAnswer => ({ emailVerified: true, email: account.email });

/**
 * Verifying the account's address (email-verification.ts). Both routes take the account's session:
 * a link proves the mailbox, the session proves the account, and only both together verify it, so
 * whoever signed up first with someone else's address cannot have its owner's click verify it for
 * them (nor can the mailbox's owner verify an account they cannot sign in to).
 */
export function mountEmailVerificationRoutes(app: Express, deps: VerificationDeps): void {
  const { db, tokens, store } = deps;

  app.post(VERIFY_RESEND_PATH, noStore, async (req, res) => {
    const { account } = await authenticate(req, tokens, store);
    if (account.emailVerifiedAt) {
      res.json(verifiedOf(account));
      return;
    }
    // The address's point first: a client over its own budget spends none of the account's.
    await consumeOrLimit(deps.resendsPerIp, clientIpKey(req), 'too many verification e-mails asked from this address; retry later');
    await consumeOrLimit(deps.resendsPerAccount, account.userId, 'too many verification e-mails for this account; retry later');
    const issued = issueVerification(deps.keyEncryptionKey, account.email);
    const result = await store.requestVerification(account, issued, req.id);
    if (result === 'conflict') {
      const now = await store.findById(account.userId);
      if (now?.emailVerifiedAt) {
        res.json(verifiedOf(now));
        return;
      }
      throw conflict('the account is still being recorded; retry');
    }
    // 'pending': the new link is stored and its e-mail leaves once Kafka has the event.
    res
      .status(202)
      .json({ emailVerified: false, email: account.email, expiresAt: issued.stored.expiresAt.toISOString() } satisfies VerificationAnswer);
  });

  app.post(VERIFY_PATH, noStore, async (req, res) => {
    const { account } = await authenticate(req, tokens, store);
    const parsed = verifyInput.safeParse(req.body ?? {});
    if (!parsed.success) throw badRequest(parsed.error.issues[0]?.message ?? 'invalid request body');
    const { token } = parsed.data;
    const state = checkVerification(account.verification, token);
    if (state === 'invalid') throw invalidLink();
    if (state === 'expired') throw new HttpError(410, 'EXPIRED', 'this link has expired; ask for a new one');
    const result = await store.confirmVerification(account, verificationTokenHash(token), req.id);
    // Another confirmation with this link took it first.
    if (result.status === 'used') throw invalidLink();
    if (result.status === 'conflict') {
      // Another confirmation with this link, or a resend, got there first: the link is spent either way.
      const now = await store.findById(account.userId);
      if (now?.verification?.tokenHash !== verificationTokenHash(token)) throw invalidLink();
      throw conflict('the account is still being recorded; retry');
    }
    if (result.status === 'verified' && result.position) {
      // Read-your-writes: the users projection (billing's e-mail match) knows at once.
      await applyEvents(await projectionCollection(db, usersProjection.collection), usersProjection, [
        { ...result.event, position: result.position },
      ]);
    }
    res.json(verifiedOf(account));
  });
}
