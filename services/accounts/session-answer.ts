import type { Db } from 'mongodb';
import { tokenVersionOf, type AccountRecord } from './account-store.ts';
import type { SessionAnswer } from './accounts.api.ts';
import { issueToken, type TokenSettings } from './tokens.ts';
import { getUser, type User } from './users.projection.ts';

export const publicUser = (u: Pick<User, 'id' | 'email' | 'name' | 'tier'>): SessionAnswer['user'] => ({
  id: u.id,
  email: u.email,
  name: u.name,
  tier: u.tier,
});

/**
 * A session for an account that has just proven who it is (a password log-in, a single sign-on): the
 * token at the account's current version and its public face, its tier as the users projection has it.
 */
export async function sessionFor(db: Db, tokens: TokenSettings, account: AccountRecord): Promise<SessionAnswer> {
  const projected = await getUser(db, account.userId);
  const user = {
    id: account.userId,
    email: account.email,
    name: account.name,
    tier: projected?.tier ?? 'free',
    tokenVersion: tokenVersionOf(account),
  };
  return { token: issueToken(tokens, user), user: publicUser(user) };
}
