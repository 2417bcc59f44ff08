import { MongoServerError, type Collection, type Db } from 'mongodb';
import type { RateLimiterRes } from 'rate-limiter-flexible';
import { MongoBlockLimiter } from '../keys/block-limiter.ts';

export const ACCOUNT_LIMITS_COLLECTION = 'account_limits';

/** One attempt limit: consume() rejects with a RateLimiterRes when the key's budget is spent. */
export interface AttemptLimiter {
  consume(key: string): Promise<RateLimiterRes>;
  /** Gives the key its budget back (a log-in's success). */
  delete(key: string): Promise<void>;
}

/**
 * The accounts service's attempt limits (log-in, sign-up, single sign-on starts), shared by every
 * replica through the database and kept across restarts: the keys' block limiter (an `_id` insert
 * per admitted attempt, the one write FerretDB makes atomic) with blocks of one attempt, so the
 * count is exact across processes rather than claimed ahead. Attempts here are few and each costs
 * a bcrypt hash or a provider round trip, so the inserts are cheap beside them.
 *
 * Windows are fixed (no reads), so each limit is two limiters half a window apart and an attempt
 * must pass both: a burst that straddles one's boundary falls inside the other's window, and more
 * than the budget within half a window is never admitted (one fixed window alone lets twice the
 * budget through across its boundary).
 */
export class SharedLimits {
  readonly #db: Db;
  readonly #collection: Collection<{ _id: string; purgeAt: Date }>;

  constructor(db: Db) {
    this.#db = db;
    this.#collection = db.collection(ACCOUNT_LIMITS_COLLECTION);
  }

  /** `points` attempts per key per window of `duration` seconds. */
  limiter(keyPrefix: string, points: number, duration: number): AttemptLimiter {
    const at = (suffix: string, offsetMs: number) =>
      new MongoBlockLimiter(this.#db, ACCOUNT_LIMITS_COLLECTION, {
        keyPrefix: `${keyPrefix}${suffix}`,
        points,
        duration,
        block: 1,
        offsetMs,
      });
    const [aligned, halfway] = [at('', 0), at('-half', (duration * 1000) / 2)];
    return {
      async consume(key) {
        await aligned.consume(key);
        return halfway.consume(key);
      },
      async delete(key) {
        await Promise.all([aligned.delete(key), halfway.delete(key)]);
      },
    };
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
