import type { Request } from 'express';
import { unauthorized } from '../platform/http/errors.ts';
import { tokenVersionOf, type AccountRecord, type AccountStore } from './account-store.ts';
import { bearer, verifyToken, type TokenClaims, type TokenSettings } from './tokens.ts';

export const WWW_AUTHENTICATE = (error: string) => ({ 'WWW-Authenticate': `Bearer realm="svc", error="${error}"` });

export interface Session {
  claims: TokenClaims;
  account: AccountRecord;
}

/** What a session is checked against: the account (its token version) and the tokens logged out one by one. */
export type SessionStore = Pick<AccountStore, 'findById' | 'isRevoked'>;

/**
 * The caller's session from `Authorization: Bearer <JWT>`, or a 401. Revocation is checked on the
 * account store, where a password change and a log-out everywhere write the new version, and on
 * the revoked tokens a single log-out writes: a refused token is refused at once, not when a
 * projection catches up, by every replica of every service that authenticates. The two reads run
 * together, so a log-out costs a request no extra round trip.
 */
export async function authenticate(req: Request, settings: TokenSettings, store: SessionStore): Promise<Session> {
  const token = bearer(req.get('authorization'));
  if (token === 'missing') throw unauthorized('missing bearer token', WWW_AUTHENTICATE('invalid_request'));
  if (token === 'malformed') throw unauthorized('malformed authorization header', WWW_AUTHENTICATE('invalid_request'));
  const claims = verifyToken(settings, token);
  if (typeof claims === 'string')
    throw unauthorized(claims === 'expired' ? 'token expired' : 'invalid token', WWW_AUTHENTICATE('invalid_token'));
  const [account, revoked] = await Promise.all([
    store.findById(claims.sub),
    claims.jti === undefined ? false : store.isRevoked(claims.jti),
  ]);
  if (!account) throw unauthorized('unknown user', WWW_AUTHENTICATE('invalid_token'));
  if (revoked || claims.ver !== tokenVersionOf(account))
    throw unauthorized('token revoked: sign in again', WWW_AUTHENTICATE('invalid_token'));
  return { claims, account };
}
