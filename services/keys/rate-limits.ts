import { createRequire } from 'node:module';
import { MongoBulkWriteError, MongoServerError, type Collection, type Db, type MongoClient } from 'mongodb';
import { RateLimiterRes, type RateLimiterStoreAbstract } from 'rate-limiter-flexible';
import { TIERS, type Tier } from '../platform/config.ts';
import { limitsOf } from './tiers.ts';

/**
 * Per-key (by tier) and per-client-IP request rate limits, shared by every process through MongoDB.
 *
 * Why not rate-limiter-flexible's RateLimiterMongo: it counts with findOneAndUpdate + $inc, which
 * FerretDB 1.24 (our local MongoDB) runs as read, modify in Go, blind write by _id, with no
 * transaction around them. Concurrent consumes lose increments (200 concurrent $inc on one
 * document left 22) and 80 concurrent consumes on a 60-point limiter were all admitted. Its TTL
 * index is refused too ("expireAfterSeconds is not implemented", code 238), and because it creates
 * that index first, its unique index on `key` is never created either.
 *
 * The one write both servers make atomic is an insert against the unique `_id`. So this store
 * counts by claiming numbered slots: request n of a window inserts `<key>#<window>#<n>`, and only
 * one inserter can win each slot, so at most `points` requests are admitted per window on MongoDB
 * and FerretDB alike. Requests read and write by `_id` alone, the only filter FerretDB's SQLite
 * backend hands to SQLite (any other is filtered in Go). Even that lookup scans the table in 1.24
 * (its `_id` index is on a different JSON expression than the query), so on FerretDB the cost per
 * request grows with the collection: run sweep() there to keep it to the live windows.
 */

export interface LimitDecision {
  allowed: boolean;
  limit: number;
  /** Requests left in the current window after this one. */
  remaining: number;
  /** Milliseconds until the current window resets. */
  resetMs: number;
}

export interface RateLimitsOptions {
  /** Requests per client IP per window; default 600. */
  perIpPerMinute?: number;
  /** Collection holding the counters; default `rate_limits`. */
  collection?: string;
  /** Window length in seconds, default 60. Only tests shorten it, to watch a window reset. */
  windowSeconds?: number;
}

/** The store could not decide (outage, timeout): the caller answers 503, never "allowed" nor 429. */
export class RateLimitStoreError extends Error {
  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
    this.name = 'RateLimitStoreError';
  }
}

export const DEFAULT_PER_IP_PER_MINUTE = 600;
export const RATE_LIMITS_COLLECTION = 'rate_limits';

export class RateLimits {
  readonly #perTier: ReadonlyMap<Tier, MongoSlotLimiter>;
  readonly #perIp: MongoSlotLimiter;
  readonly #collection: Collection<StoredDoc>;

  constructor(client: MongoClient, dbName: string, options: RateLimitsOptions = {}) {
    const db = client.db(dbName);
    const name = options.collection ?? RATE_LIMITS_COLLECTION;
    this.#collection = db.collection<StoredDoc>(name);
    const duration = options.windowSeconds ?? 60;
    // One key prefix for every tier: a key that changes tier mid-window keeps its count and is
    // measured against the new tier's limit, instead of starting a fresh window.
    this.#perTier = new Map(
      TIERS.map((t) => [t, new MongoSlotLimiter(db, name, { keyPrefix: 'key', points: limitsOf(t).requestsPerMinute, duration })]),
    );
    this.#perIp = new MongoSlotLimiter(db, name, { keyPrefix: 'ip', points: options.perIpPerMinute ?? DEFAULT_PER_IP_PER_MINUTE, duration });
  }

  consumeKey(keyHash: string, tier: Tier): Promise<LimitDecision> {
    const limiter = this.#perTier.get(tier);
    if (!limiter) return Promise.reject(new TypeError(`unknown tier: ${String(tier)}`));
    return decide(limiter, keyHash);
  }

  consumeIp(ip: string): Promise<LimitDecision> {
    return decide(this.#perIp, normalizeIp(ip));
  }

  /**
   * Housekeeping indexes; limiting is correct without them. MongoDB expires old counters through
   * the TTL index; FerretDB refuses TTL indexes (ttl: false), so there the caller runs sweep()
   * every window or so to keep the collection small.
   */
  async ensureIndexes(): Promise<{ ttl: boolean }> {
    await this.#collection.createIndex({ key: 1 });
    try {
      await this.#collection.createIndex({ purgeAt: 1 }, { expireAfterSeconds: 0 });
      return { ttl: true };
    } catch (err) {
      if (err instanceof MongoServerError && err.code === NOT_IMPLEMENTED) return { ttl: false };
      throw err;
    }
  }

  /** Deletes counters of windows that ended at least one window ago; returns how many. */
  async sweep(now: Date = new Date()): Promise<number> {
    const { deletedCount } = await this.#collection.deleteMany({ purgeAt: { $lt: now } });
    return deletedCount;
  }
}

async function decide(limiter: MongoSlotLimiter, key: string): Promise<LimitDecision> {
  const limit = limiter.points;
  try {
    const res = await limiter.consume(key);
    return { allowed: true, limit, remaining: res.remainingPoints, resetMs: res.msBeforeNext };
  } catch (err) {
    // rate-limiter-flexible rejects with a RateLimiterRes when over the limit, and with the store's
    // own error when it could not count; only the former is a refusal.
    if (err instanceof RateLimiterRes) return { allowed: false, limit, remaining: 0, resetMs: Math.max(1, err.msBeforeNext) };
    throw new RateLimitStoreError('rate limit store unavailable', { cause: err });
  }
}

/** Node reports IPv4 clients of a dual-stack socket as `::ffff:a.b.c.d`; count them as `a.b.c.d`. */
function normalizeIp(ip: string): string {
  return ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice('::ffff:'.length) : ip;
}

const DUPLICATE_KEY = 11000;
const NOT_IMPLEMENTED = 238;
/** The head stores (window, slot) as one number so that a single $max keeps the newest. */
const POS_BASE = 2 ** 24;

/** A claimed slot: request `n` of window `gen`, which ends at `expireMs`. */
interface SlotDoc {
  _id: string;
  key: string;
  gen: number;
  n: number;
  expireMs: number;
  purgeAt: Date;
}

/** A hint for where the newest window's count stands; see MongoSlotLimiter. */
interface HeadDoc {
  _id: string;
  key: string;
  pos: number;
  expireMs: number;
  purgeAt: Date;
}

type StoredDoc = SlotDoc | HeadDoc;

/** What _upsert hands to _getRateLimiterRes. */
interface Count {
  consumed: number;
  expireMs: number;
  first: boolean;
}

interface Waiter {
  resolve(count: Count): void;
  reject(err: unknown): void;
}

interface HeadView {
  gen: number;
  n: number;
  expireMs: number;
}

// The package's types declare RateLimiterStoreAbstract and its README says custom stores extend
// it, but its index does not export it at runtime; load it from its own file.
const StoreAbstract = createRequire(import.meta.url)('rate-limiter-flexible/lib/RateLimiterStoreAbstract.js') as typeof RateLimiterStoreAbstract;

const slotId = (rlKey: string, gen: number, n: number): string => `${rlKey}#${gen}#${n}`;
const headId = (rlKey: string): string => `${rlKey}#head`;
const isDuplicate = (err: unknown): boolean => err instanceof MongoServerError && err.code === DUPLICATE_KEY;

/**
 * A rate-limiter-flexible store (fixed window, starting at the window's first request, like the
 * library's own stores) over inserts of unique `_id`s.
 *
 * Windows of a key are numbered (`gen`); slot 1 of a window is inserted by whoever opens it and
 * holds the window's end for everyone. Requests claim the lowest slots they can find, a contiguous
 * range at a time. The head document only says where to start looking (it is written with $max,
 * which FerretDB does not apply atomically, so it may lag); it only ever names slots already
 * taken, so the slots anyone tries always form a prefix 1..t and every tried slot ends up taken.
 * Hence requests are refused only once slots 1..points are all taken: exactly `points` admitted.
 *
 * Concurrent requests for one key in this process share one claim: N requests racing for the
 * same slot one at a time would cost O(N^2) writes, and a limiter must stay cheap under the very
 * bursts it exists for.
 *
 * Supports consume() of one point and get()/delete(); the other operations reject.
 */
class MongoSlotLimiter extends StoreAbstract {
  readonly #slots: Collection<SlotDoc>;
  readonly #heads: Collection<HeadDoc>;
  /** Requests waiting for the next claim of their key; a key is present while a claim runs. */
  readonly #waiting = new Map<string, Waiter[]>();

  constructor(db: Db, collection: string, opts: { keyPrefix: string; points: number; duration: number }) {
    super({ ...opts, storeClient: db });
    if (!Number.isInteger(opts.points) || opts.points < 1 || opts.points >= POS_BASE) {
      throw new RangeError(`points must be an integer in [1, ${POS_BASE})`);
    }
    if (!(opts.duration > 0)) throw new RangeError('duration must be positive');
    // Slots and heads share one collection (their _ids cannot collide: a head's ends in `#head`).
    this.#slots = db.collection<SlotDoc>(collection);
    this.#heads = db.collection<HeadDoc>(collection);
  }

  // Called by RateLimiterStoreAbstract.consume/penalty/reward/block/set.
  _upsert(rlKey: string, points: number, msDuration: number, forceExpire = false): Promise<Count> {
    if (forceExpire || points !== 1 || !(msDuration > 0)) {
      return Promise.reject(new Error('MongoSlotLimiter supports consuming one point at a time only'));
    }
    return new Promise<Count>((resolve, reject) => {
      const queue = this.#waiting.get(rlKey);
      if (queue) {
        queue.push({ resolve, reject });
        return;
      }
      this.#waiting.set(rlKey, []);
      void this.#drain(rlKey, msDuration, [{ resolve, reject }]);
    });
  }

  _getRateLimiterRes(_rlKey: string, _changedPoints: number, count: Count): RateLimiterRes {
    return new RateLimiterRes(Math.max(this.points - count.consumed, 0), Math.max(count.expireMs - Date.now(), 0), count.consumed, count.first);
  }

  async _get(rlKey: string): Promise<Count | null> {
    const head = await this.#readHead(rlKey);
    if (!head || head.expireMs <= Date.now()) return null;
    return { consumed: head.n, expireMs: head.expireMs, first: false };
  }

  async _delete(rlKey: string): Promise<boolean> {
    const { deletedCount } = await this.#slots.deleteMany({ key: rlKey });
    return deletedCount > 0;
  }

  /** Runs claims for rlKey until nobody is waiting; whoever arrives meanwhile joins the next one. */
  async #drain(rlKey: string, msDuration: number, first: Waiter[]): Promise<void> {
    let batch = first;
    while (batch.length > 0) {
      const pending = [...batch];
      try {
        await this.#claim(rlKey, msDuration, pending);
      } catch (err) {
        for (const w of pending) w.reject(err);
      }
      batch = this.#waiting.get(rlKey) ?? [];
      this.#waiting.set(rlKey, []);
    }
    this.#waiting.delete(rlKey);
  }

  /** Settles every waiter in `pending` (removing it) with a slot or a refusal, or throws. */
  async #claim(rlKey: string, msDuration: number, pending: Waiter[]): Promise<void> {
    const limit = this.points;
    let head = await this.#readHead(rlKey);
    let gen = head?.gen ?? 1;
    let expireMs = head?.expireMs;
    let next = (head?.n ?? 0) + 1;
    // Each step settles someone, advances `next` or moves to a later window, so this is a bound,
    // not a retry budget; reaching it means the collection is being rewritten under us.
    const maxSteps = limit + pending.length + 100;
    for (let step = 0; step < maxSteps; step++) {
      const now = Date.now();
      if (expireMs === undefined) {
        const opener = await this.#slots.findOne({ _id: slotId(rlKey, gen, 1) });
        if (opener) {
          expireMs = opener.expireMs;
          next = Math.max(next, 2);
          continue;
        }
        // Open the window with slot 1 alone: it fixes the window's end for everyone.
        const opened = now + msDuration;
        const [won] = await this.#insertSlots(rlKey, gen, 1, 1, opened, msDuration);
        if (won) {
          await this.#advanceHead(rlKey, gen, 1, opened, msDuration);
          pending.shift()?.resolve({ consumed: 1, expireMs: opened, first: true });
          expireMs = opened;
          next = 2;
        }
        continue; // on a loss, another process opened it a moment ago: read its end next step
      }
      if (pending.length === 0) return;
      if (expireMs <= now) {
        gen += 1;
        expireMs = undefined;
        next = 1;
        continue;
      }
      if (next > limit) {
        // Save later refusals the walk over taken slots: one read of the head will do.
        if (!head || head.gen !== gen || head.n < limit) await this.#advanceHead(rlKey, gen, limit, expireMs, msDuration);
        for (const w of pending.splice(0)) w.resolve({ consumed: limit + 1, expireMs, first: false });
        return;
      }
      const [from, last, windowEnd] = [next, Math.min(limit, next + pending.length - 1), expireMs];
      const won = await this.#insertSlots(rlKey, gen, from, last, windowEnd, msDuration);
      // Every slot up to `last` is now taken, by us or by others.
      await this.#advanceHead(rlKey, gen, last, windowEnd, msDuration);
      won.forEach((ours, i) => {
        if (ours) pending.shift()?.resolve({ consumed: from + i, expireMs: windowEnd, first: false });
      });
      next = last + 1;
      if (won.every(Boolean)) continue;
      // Lost some to other processes: they may have moved further on; start from there.
      head = await this.#readHead(rlKey);
      if (head && head.gen > gen) {
        gen = head.gen;
        expireMs = head.expireMs;
        next = head.n + 1;
      } else if (head && head.gen === gen) {
        next = Math.max(next, head.n + 1);
      }
    }
    throw new Error(`rate limit store: no decision for ${rlKey} after ${maxSteps} steps`);
  }

  /** Tries slots from..to of window gen; element i says whether slot from+i is now ours. */
  async #insertSlots(rlKey: string, gen: number, from: number, to: number, expireMs: number, msDuration: number): Promise<boolean[]> {
    const docs: SlotDoc[] = [];
    for (let n = from; n <= to; n++) {
      docs.push({ _id: slotId(rlKey, gen, n), key: rlKey, gen, n, expireMs, purgeAt: new Date(expireMs + msDuration) });
    }
    const ours = docs.map(() => true);
    try {
      // Unordered: a slot someone else holds must not stop us trying the ones after it.
      await this.#slots.insertMany(docs, { ordered: false });
    } catch (err) {
      if (!(err instanceof MongoBulkWriteError)) throw err;
      const errors = Array.isArray(err.writeErrors) ? err.writeErrors : [err.writeErrors];
      for (const e of errors) {
        if (e.code !== DUPLICATE_KEY) throw err;
        ours[e.index] = false;
      }
    }
    return ours;
  }

  async #readHead(rlKey: string): Promise<HeadView | null> {
    const doc = await this.#heads.findOne({ _id: headId(rlKey) });
    if (!doc) return null;
    return { gen: Math.floor(doc.pos / POS_BASE), n: doc.pos % POS_BASE, expireMs: doc.expireMs };
  }

  async #advanceHead(rlKey: string, gen: number, n: number, expireMs: number, msDuration: number): Promise<void> {
    try {
      // A later window always ends later, so $max on each field keeps a consistent pair.
      await this.#heads.updateOne(
        { _id: headId(rlKey) },
        { $max: { pos: gen * POS_BASE + n, expireMs, purgeAt: new Date(expireMs + msDuration) }, $setOnInsert: { key: rlKey } },
        { upsert: true },
      );
    } catch (err) {
      // Two first writers raced to create the head (FerretDB does not retry such upserts); the
      // winner's hint is as good as ours. Any other failure is the store's and must surface.
      if (!isDuplicate(err)) throw err;
    }
  }
}
