import { createHash, randomBytes } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { keysEqualConstantTime } from '../../platform/secrets.ts';

/**
 * The hand-over from a finished sign-on to the console: a one-time code in the redirect's URL, never
 * the session token. 32 random bytes, stored only as their SHA-256 (the database holds nothing that
 * opens a session), good for 60 seconds and once: redeeming deletes the document, and only the
 * delete that removed it (deletedCount 1, atomic on `_id` in MongoDB and FerretDB alike) wins.
 * The token is issued at redemption, from the account as it is then.
 *
 * A code is also bound to the browser that started the sign-on: the console keeps a random secret in
 * its own cookie when the sign-on starts and sends its SHA-256 along; redeeming needs the secret. So a
 * code issued to someone else (an attacker who signed on with their own account at the provider and
 * sends the link on) does not sign a victim's browser into that account: the classic login CSRF.
 */

export const CODE_TTL_MS = 60_000;
const COLLECTION = 'sso_codes';

/** What a link flow's code records, once redeemed, on its account (sso-link.routes.ts). */
export interface PendingLink {
  issuer: string;
  subject: string;
  subscriptionId: string;
  /** The account's token version when the link was started: a log-out everywhere since voids it. */
  tokenVersion: number;
}

interface CodeDocument {
  _id: string;
  userId: string;
  /** SHA-256 (base64url) of the browser's binding secret. */
  binding: string;
  expiresAt: Date;
  /** A link flow's code: never a session's (redeem checks which is asked for). */
  link?: PendingLink;
}

/** A redeemed code: the account, and for a link flow what it links. */
export interface Redeemed {
  userId: string;
  link: PendingLink | null;
}

const hashOf = (code: string) => createHash('sha256').update(code).digest('hex');

/** The hash of a binding secret, as the console sends it with the start and the flow keeps it. */
export const bindingHash = (secret: string): string => createHash('sha256').update(secret).digest('base64url');

export class OneTimeCodes {
  readonly #codes: Collection<CodeDocument>;

  constructor(db: Db) {
    this.#codes = db.collection<CodeDocument>(COLLECTION);
  }

  async ensureIndexes(): Promise<void> {
    await this.#codes.createIndex({ expiresAt: 1 });
  }

  /** A new code for this account (a link flow's, with what it links); the plaintext exists only in the answer. */
  async issue(userId: string, binding: string, now = Date.now(), link: PendingLink | null = null): Promise<string> {
    const code = randomBytes(32).toString('base64url');
    await this.#codes.insertOne({ _id: hashOf(code), userId, binding, expiresAt: new Date(now + CODE_TTL_MS), ...(link ? { link } : {}) });
    return code;
  }

  /**
   * The account the code was issued for, once, to the browser holding the binding secret; null for an
   * unknown, used or expired code, or another browser's. Any attempt uses the code up.
   */
  async redeem(code: string, bindingSecret: string, now = Date.now()): Promise<string | null> {
    const found = await this.redeemAny(code, bindingSecret, now);
    // A link flow's code opens no session.
    return found && found.link === null ? found.userId : null;
  }

  /** The same for either kind: the account and, for a link flow's code, what it links. */
  async redeemAny(code: string, bindingSecret: string, now = Date.now()): Promise<Redeemed | null> {
    const id = hashOf(code);
    const found = await this.#codes.findOne({ _id: id });
    if (!found) return null;
    const { deletedCount } = await this.#codes.deleteOne({ _id: id });
    if (deletedCount !== 1) return null;
    if (!keysEqualConstantTime(bindingHash(bindingSecret), found.binding)) return null;
    return found.expiresAt.getTime() > now ? { userId: found.userId, link: found.link ?? null } : null;
  }

  /** Drops codes nobody redeemed (FerretDB has no TTL index). */
  async sweep(now = Date.now()): Promise<void> {
    await this.#codes.deleteMany({ expiresAt: { $lt: new Date(now) } });
  }
}
