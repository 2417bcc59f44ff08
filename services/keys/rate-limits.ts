import { MongoServerError, type Collection, type MongoClient } from 'mongodb';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { ipLimitKey } from '../platform/http/client-ip.ts';
import { BlockInserts } from './block-inserts.ts';
import { MongoBlockLimiter, type BlockDoc } from './block-limiter.ts';
import { TIERS, limitsOf, type Tier } from '../kernel/tiers.ts';
import { keyMetrics } from './metrics.ts';
import type { LimitDecision } from './validator.ts';

/** The decision type the gate reads, re-exported for callers of the limits alone. */
export type { LimitDecision };

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
 * The one write both servers make atomic is an insert against the unique `_id`, so the store
 * (block-limiter.ts) grants a window's budget in blocks claimed by inserting a document each, and
 * never reads: FerretDB 1.24 scans the collection even for lookups by `_id`. sweep() keeps the
 * collection to the live windows where no TTL index can.
 */

export interface RateLimitsOptions {
  /** Requests per client IP per window; default DEFAULT_PER_IP_PER_MINUTE. */
  perIpPerMinute?: number;
  /** Collection holding the counters; default `rate_limits`. */
  collection?: string;
  /** Window length in seconds, default 60. Only tests shorten it, to watch a window reset. */
  windowSeconds?: number;
  /**
   * Requests a process claims at once, as a fraction of the limit (default 1/20: 3 of free's 60, 30
   * of pro's 600, 300 of team's 6000 and of 6000 per IP); 0 claims one request at a time (exact
   * across processes).
   */
  blockFraction?: number;
  /**
   * Where in its ranges each key claims its next blocks ahead (0–1), drawn per key and window;
   * default random, so that keys under the same load do not all claim at once. Only tests fix it,
   * to place a claim in time.
   */
  claimAheadJitter?: () => number;
}

/** The store could not decide (outage, timeout): the caller answers 503, never "allowed" nor 429. */
export class RateLimitStoreError extends Error {
  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
    this.name = 'RateLimitStoreError';
  }
}

/** The team tier's per-key rate: one server relaying one team key is never limited by its address first. */
export const DEFAULT_PER_IP_PER_MINUTE = 6000;
export const RATE_LIMITS_COLLECTION = 'rate_limits';

export class RateLimits {
  readonly #perTier: ReadonlyMap<Tier, MongoBlockLimiter>;
  readonly #perIp: MongoBlockLimiter;
  readonly #collection: Collection<{ _id: string; purgeAt: Date }>;
  /** Limiters of keys whose owners set a lower limit than their tier's, by tier and limit. */
  readonly #custom = new Map<string, MongoBlockLimiter>();
  readonly #customLimiter: (tier: Tier, points: number) => MongoBlockLimiter;

  constructor(client: MongoClient, dbName: string, options: RateLimitsOptions = {}) {
    const db = client.db(dbName);
    const name = options.collection ?? RATE_LIMITS_COLLECTION;
    this.#collection = db.collection<{ _id: string; purgeAt: Date }>(name);
    const duration = options.windowSeconds ?? 60;
    // A counter per tier (their blocks differ in size): a key that changes tier starts the new
    // tier's window.
    const fraction = options.blockFraction ?? 1 / 20;
    // One queue of block claims for every limiter here: a flush carries all of theirs in one command.
    const inserts = new BlockInserts<BlockDoc>(db.collection<BlockDoc>(name));
    const limiter = (keyPrefix: string, points: number) =>
      new MongoBlockLimiter(db, name, {
        keyPrefix,
        points,
        duration,
        block: Math.max(1, Math.floor(points * fraction)),
        inserts,
        jitter: options.claimAheadJitter,
      });
    this.#perTier = new Map(TIERS.map((t) => [t, limiter(`key-${t}`, limitsOf(t).requestsPerMinute)]));
    // Its own counter per limit: a key whose owner changes its limit starts a new window.
    this.#customLimiter = (tier, points) => limiter(`key-${tier}-${points}`, points);
    this.#perIp = limiter('ip', options.perIpPerMinute ?? DEFAULT_PER_IP_PER_MINUTE);
  }

  /** perMinute: the key's own limit; the tier's is the ceiling, so a higher one is the tier's. */
  consumeKey(keyHash: string, tier: Tier, perMinute?: number): Promise<LimitDecision> {
    const limiter = this.#keyLimiter(tier, perMinute);
    if (!limiter) return Promise.reject(new TypeError(`unknown tier: ${String(tier)}`));
    return decide(limiter, keyHash, tier);
  }

  #keyLimiter(tier: Tier, perMinute: number | undefined): MongoBlockLimiter | undefined {
    const base = this.#perTier.get(tier);
    if (!base || perMinute === undefined || perMinute >= base.points || perMinute < 1) return base;
    const name = `${tier}-${perMinute}`;
    let limiter = this.#custom.get(name);
    if (!limiter) {
      // Bounded: limits are whole numbers under the tier's, so at most a few thousand ever exist.
      if (this.#custom.size >= 1000) this.#custom.clear();
      limiter = this.#customLimiter(tier, perMinute);
      this.#custom.set(name, limiter);
    }
    return limiter;
  }

  consumeIp(ip: string): Promise<LimitDecision> {
    return decide(this.#perIp, ipLimitKey(ip), 'ip');
  }

  /**
   * The same decisions, synchronously, when this process already holds what they need (a block
   * of the window with requests left); undefined otherwise, with nothing consumed, for the async
   * forms to settle. Most hot-path requests end here without a promise.
   */
  keyHeld(keyHash: string, tier: Tier, perMinute?: number): LimitDecision | undefined {
    const limiter = this.#keyLimiter(tier, perMinute);
    return limiter?.consumeHeld(keyHash);
  }

  ipHeld(ip: string): LimitDecision | undefined {
    return this.#perIp.consumeHeld(ipLimitKey(ip));
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

async function decide(limiter: MongoBlockLimiter, key: string, limit: Tier | 'ip'): Promise<LimitDecision> {
  const held = limiter.consumeHeld(key);
  if (held) return held;
  try {
    const res = await limiter.consume(key);
    return { allowed: true, limit: limiter.points, remaining: res.remainingPoints, resetAt: limiter.resetAt(res.msBeforeNext) };
  } catch (err) {
    // rate-limiter-flexible rejects with a RateLimiterRes when over the limit, and with the store's
    // own error when it could not count; only the former is a refusal.
    if (err instanceof RateLimiterRes) {
      keyMetrics.rateLimited.inc({ tier: limit });
      return { allowed: false, limit: limiter.points, remaining: 0, resetAt: limiter.resetAt(err.msBeforeNext) };
    }
    throw new RateLimitStoreError('rate limit store unavailable', { cause: err });
  }
}

const NOT_IMPLEMENTED = 238;
