import { hkdfSync } from 'node:crypto';
import { open, seal, type SealContext } from '../../platform/sealed-box.ts';

/**
 * What carries a logged-in account from `POST /auth/sso/link/start` (which has its bearer token) to the
 * browser's `GET /auth/sso/start?link=` (which has none): the account, the token version it was asked
 * with, the console's browser binding and a five-minute expiry, sealed (AES-256-GCM under a key derived
 * from JWT_SECRET), so nothing in it can be read or changed. *Choice:* no state in any process or
 * database: a ticket that leaks is still of no use to another browser, because the link is recorded
 * only by `POST /auth/sso/link/finish` with the code the flow ends with, which needs the binding secret
 * only the console's cookie in the account owner's browser holds (one-time-codes.ts).
 */

export const LINK_TICKET_TTL_MS = 5 * 60 * 1000;

export interface LinkTicket {
  userId: string;
  tokenVersion: number;
  /** SHA-256 (base64url) of the console's binding secret for this link. */
  binding: string;
  expiresAt: number;
}

const CONTEXT: SealContext = { label: 'svc/sso-link-ticket/v1', fields: [] };

const keyOf = (jwtSecret: string): Buffer => Buffer.from(hkdfSync('sha256', jwtSecret, 'svc-accounts', 'sso link ticket', 32));

export function sealLinkTicket(jwtSecret: string, ticket: LinkTicket): string {
  return seal(JSON.stringify(ticket), keyOf(jwtSecret), CONTEXT);
}

/** The ticket, or null when it is not one this deployment sealed, is malformed or has expired. */
export function openLinkTicket(jwtSecret: string, sealed: string, now = Date.now()): LinkTicket | null {
  let value: unknown;
  try {
    value = JSON.parse(open(sealed, keyOf(jwtSecret), CONTEXT, (reason) => new Error(reason)));
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const t = value as Record<string, unknown>;
  if (
    typeof t.userId !== 'string' ||
    typeof t.tokenVersion !== 'number' ||
    typeof t.binding !== 'string' ||
    typeof t.expiresAt !== 'number' ||
    t.expiresAt <= now
  )
    return null;
  return { userId: t.userId, tokenVersion: t.tokenVersion, binding: t.binding, expiresAt: t.expiresAt };
}
