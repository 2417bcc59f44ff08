import { randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { Tier } from '../kernel/tiers.ts';

export const TOKEN_TTL_SECONDS = 7 * 24 * 60 * 60;

/**
 * The signing secret and who issues tokens for whom (config.secrets.jwtSecret, config.jwt).
 * Configurable, so two deployments that (wrongly) share a secret still refuse each other's tokens.
 */
export interface TokenSettings {
  secret: string;
  issuer: string;
  audience: string;
}

export interface TokenClaims {
  sub: string;
  email: string;
  /** The tier when the token was issued: informative only, the users projection is the truth. */
  tier: Tier;
  /** The account's token version when issued: a password change moves it on, refusing older tokens. */
  ver: number;
  /**
   * The token's own id (random), by which a log-out refuses this token alone (revoked-tokens.ts).
   * Absent from tokens issued before log-out existed: those are refused only by moving `ver` on.
   */
  jti?: string;
  iss: string;
  aud: string;
  iat: number;
  exp: number;
}

export interface TokenSubject {
  id: string;
  email: string;
  tier: Tier;
  tokenVersion: number;
}

export function issueToken(settings: TokenSettings, user: TokenSubject, now = new Date()): string {
  const iat = Math.floor(now.getTime() / 1000);
  return jwt.sign(
    {
      sub: user.id,
      email: user.email,
      tier: user.tier,
      ver: user.tokenVersion,
      jti: randomUUID(),
      iss: settings.issuer,
      aud: settings.audience,
      iat,
      exp: iat + TOKEN_TTL_SECONDS,
    },
    settings.secret,
    { algorithm: 'HS256' },
  );
}

/** What issueToken writes (a UUID); anything else in `jti` is not our token. */
const JTI = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export type TokenProblem = 'missing' | 'malformed' | 'expired' | 'invalid';

/**
 * Verifies with HS256 pinned (`none` and every other algorithm are refused) and our issuer and
 * audience required: a token signed with the same secret for another purpose or deployment, or one
 * from before these claims existed, is not a session here.
 */
export function verifyToken(settings: TokenSettings, token: string): TokenClaims | TokenProblem {
  try {
    const claims = jwt.verify(token, settings.secret, { algorithms: ['HS256'], issuer: settings.issuer, audience: settings.audience });
    if (typeof claims !== 'object' || typeof claims.sub !== 'string' || typeof claims.email !== 'string') return 'invalid';
    if (!Number.isInteger(claims.ver)) return 'invalid';
    if (claims.jti !== undefined && (typeof claims.jti !== 'string' || !JTI.test(claims.jti))) return 'invalid';
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
