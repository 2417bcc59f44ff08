import { MongoServerError, type Collection, type Db } from 'mongodb';
import { MongoBlockLimiter } from '../keys/block-limiter.ts';

export const ACCOUNT_LIMITS_COLLECTION = 'account_limits';

/**
 * The accounts service's attempt limits (log-in, sign-up, single sign-on starts), shared by every
 * replica through the database and kept across restarts: the keys' block limiter (an `_id` insert
 * per admitted attempt, the one write FerretDB makes atomic) with blocks of one attempt, so the
 * count is exact across processes rather than claimed ahead. Attempts here are few and each costs
 * a bcrypt hash or a provider round trip, so one insert per attempt is cheap beside them.
 */
export class SharedLimits {
  readonly #db: Db;
  readonly #collection: Collection<{ _id: string; purgeAt: Date }>;

  constructor(db: Db) {
    this.#db = db;
    this.#collection = db.collection(ACCOUNT_LIMITS_COLLECTION);
  }

  /** `points` attempts per key per fixed window of `duration` seconds (aligned to the clock). */
  limiter(keyPrefix: string, points: number, duration: number): MongoBlockLimiter {
    return new MongoBlockLimiter(this.#db, ACCOUNT_LIMITS_COLLECTION, { keyPrefix, points, duration, block: 1 });
  }

  /** `key` for delete() (a success gives an e-mail its attempts back); the TTL index where the database has one. */
  async ensureIndexes(): Promise<void> {
    await this.#collection.createIndex({ key: 1 });
    try {
      await this.#collection.createIndex({ purgeAt: 1 }, { expireAfterSeconds: 0 });
    } catch (err) {
      // FerretDB 1.24: "expireAfterSeconds is not implemented"; sweep() keeps the collection small.
      if (!(err instanceof MongoServerError && err.code === NOT_IMPLEMENTED)) throw err;
      await this.#collection.createIndex({ purgeAt: 1 });
    }
  }

  /** Deletes the counts of windows that ended at least one window ago; returns how many. */
  async sweep(now = new Date()): Promise<number> {
    const { deletedCount } = await this.#collection.deleteMany({ purgeAt: { $lt: now } });
    return deletedCount;
  }
}

const NOT_IMPLEMENTED = 238;
