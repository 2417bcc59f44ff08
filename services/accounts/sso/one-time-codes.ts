import { createHash, randomBytes } from 'node:crypto';
import type { Collection, Db } from 'mongodb';

/**
 * The hand-over from a finished sign-on to the console: a one-time code in the redirect's URL, never
 * the session token. 32 random bytes, stored only as their SHA-256 (the database holds nothing that
 * opens a session), good for 60 seconds and once: redeeming deletes the document, and only the
 * delete that removed it (deletedCount 1, atomic on `_id` in MongoDB and FerretDB alike) wins.
 * The token is issued at redemption, from the account as it is then.
 */

export const CODE_TTL_MS = 60_000;
const COLLECTION = 'sso_codes';

interface CodeDocument {
  _id: string;
  userId: string;
  expiresAt: Date;
}

const hashOf = (code: string) => createHash('sha256').update(code).digest('hex');

export class OneTimeCodes {
  readonly #codes: Collection<CodeDocument>;

  constructor(db: Db) {
    this.#codes = db.collection<CodeDocument>(COLLECTION);
  }

  async ensureIndexes(): Promise<void> {
    await this.#codes.createIndex({ expiresAt: 1 });
  }

  /** A new code for this account; the plaintext exists only in the answer. */
  async issue(userId: string, now = Date.now()): Promise<string> {
    const code = randomBytes(32).toString('base64url');
    await this.#codes.insertOne({ _id: hashOf(code), userId, expiresAt: new Date(now + CODE_TTL_MS) });
    return code;
  }

  /** The account the code was issued for, once; null for an unknown, used or expired code. */
  async redeem(code: string, now = Date.now()): Promise<string | null> {
    const id = hashOf(code);
    const found = await this.#codes.findOne({ _id: id });
    if (!found) return null;
    const { deletedCount } = await this.#codes.deleteOne({ _id: id });
    if (deletedCount !== 1) return null;
    return found.expiresAt.getTime() > now ? found.userId : null;
  }

  /** Drops codes nobody redeemed (FerretDB has no TTL index). */
  async sweep(now = Date.now()): Promise<void> {
    await this.#codes.deleteMany({ expiresAt: { $lt: new Date(now) } });
  }
}
