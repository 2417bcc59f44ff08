import jwt from 'jsonwebtoken';
import type { Tier } from '../keys/tiers.ts';

export const TOKEN_TTL_SECONDS = 7 * 24 * 60 * 60;

export interface TokenClaims {
  sub: string;
  email: string;
  tier: Tier;
  iat: number;
  exp: number;
}

export function issueToken(secret: string, user: { id: string; email: string; tier: Tier }, now = new Date()): string {
  const iat = Math.floor(now.getTime() / 1000);
  return jwt.sign({ sub: user.id, email: user.email, tier: user.tier, iat, exp: iat + TOKEN_TTL_SECONDS }, secret, { algorithm: 'HS256' });
}

export type TokenProblem = 'missing' | 'malformed' | 'expired' | 'invalid';

/** Verifies with HS256 pinned: `none` and every other algorithm are refused. */
export function verifyToken(secret: string, token: string): TokenClaims | TokenProblem {
  try {
    const claims = jwt.verify(token, secret, { algorithms: ['HS256'] });
    if (typeof claims !== 'object' || typeof claims.sub !== 'string' || typeof claims.email !== 'string') return 'invalid';
    return claims as TokenClaims;
  } catch (err) {
    if (err instanceof jwt.TokenExpiredError) return 'expired';
    if (err instanceof jwt.JsonWebTokenError && err.message === 'jwt malformed') return 'malformed';
    return 'invalid';
  }
}

/** `Authorization: Bearer <token>` -> the token, or a problem. */
export function bearer(header: string | undefined): string | TokenProblem {
  if (!header) return 'missing';
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? 'malformed';
}
