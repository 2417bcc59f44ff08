import type { Request } from 'express';
import { unauthorized } from '../platform/http/errors.ts';
import { tokenVersionOf, type AccountRecord, type AccountStore } from './account-store.ts';
import { bearer, verifyToken, type TokenClaims, type TokenSettings } from './tokens.ts';

export const WWW_AUTHENTICATE = (error: string) => ({ 'WWW-Authenticate': `Bearer realm="svc", error="${error}"` });

export interface Session {
  claims: TokenClaims;
  account: AccountRecord;
}

/**
 * The caller's session from `Authorization: Bearer <JWT>`, or a 401. Revocation is checked on the
 * account store, where a password change writes the new version together with the new hash: a
 * refused token is refused at once, not when the users projection catches up.
 */
export async function authenticate(req: Request, settings: TokenSettings, store: Pick<AccountStore, 'findById'>): Promise<Session> {
  const token = bearer(req.get('authorization'));
  if (token === 'missing') throw unauthorized('missing bearer token', WWW_AUTHENTICATE('invalid_request'));
  if (token === 'malformed') throw unauthorized('malformed authorization header', WWW_AUTHENTICATE('invalid_request'));
  const claims = verifyToken(settings, token);
  if (typeof claims === 'string')
    throw unauthorized(claims === 'expired' ? 'token expired' : 'invalid token', WWW_AUTHENTICATE('invalid_token'));
  const account = await store.findById(claims.sub);
  if (!account) throw unauthorized('unknown user', WWW_AUTHENTICATE('invalid_token'));
  if (claims.ver !== tokenVersionOf(account)) throw unauthorized('token revoked: sign in again', WWW_AUTHENTICATE('invalid_token'));
  return { claims, account };
}
