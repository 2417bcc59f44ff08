import type { Express } from 'express';
import { unavailable } from '../platform/http/errors.ts';
import { noStore } from '../platform/http/no-store.ts';
import type { AccountRecord, AccountStore } from './account-store.ts';
import type { LogoutAnswer } from './logout.api.ts';
import { authenticate } from './session.ts';
import type { TokenSettings } from './tokens.ts';

export interface LogoutDeps {
  tokens: TokenSettings;
  store: AccountStore;
}

/**
 * Log-out with the bearer token alone, so an account made by single sign-on (whose password nobody
 * knows) can end its sessions too. Nothing here lives in a process: the refusal is a record every
 * replica of every service reads in authenticate().
 */
export function mountLogoutRoutes(app: Express, deps: LogoutDeps): void {
  const { tokens, store } = deps;

  app.post('/auth/logout', noStore, async (req, res) => {
    const { claims, account } = await authenticate(req, tokens, store);
    if (claims.jti === undefined) {
      await logOutEverywhere(store, account, req.id);
      res.json({
        revoked: 'all',
        reason: 'this token was issued before log-out could name a single token: every token of the account is refused',
      } satisfies LogoutAnswer);
      return;
    }
    await store.revocations.revoke({ jti: claims.jti, userId: account.userId, exp: claims.exp }, req.id);
    res.json({ revoked: 'this' } satisfies LogoutAnswer);
  });

  app.post('/auth/logout-all', noStore, async (req, res) => {
    const { account } = await authenticate(req, tokens, store);
    await logOutEverywhere(store, account, req.id);
    res.json({ revoked: 'all' } satisfies LogoutAnswer);
  });
}

/**
 * Moves the account's token version on. An earlier claim of the account still unpublished (Kafka
 * was away) blocks the write; it is published first, and with Kafka still away the answer is 503
 * with nothing changed rather than a log-out the audit log would never see.
 */
async function logOutEverywhere(store: AccountStore, account: AccountRecord, correlationId: string): Promise<void> {
  let current = account;
  for (let attempt = 0; attempt < 3; attempt++) {
    const result = await store.logOutEverywhere(current, correlationId);
    if (result.status !== 'conflict') return;
    const latest = await store.findByEmail(current._id);
    if (!latest) throw unavailable();
    if (latest.outbox?.pending && !(await store.retryPending(latest))) throw unavailable();
    current = latest;
  }
  throw unavailable('the account is changing; retry');
}
