import type { Db } from 'mongodb';
import { assessKey, invalid, type Assessment } from './assess.ts';
import { hashKey, isWellFormedKey } from './key-format.ts';
import type { KeyCache } from './key-cache.ts';
import { getKeyByHash } from './keys.projection.ts';
import type { Metric } from './tiers.ts';
import { TtlCache } from './ttl-cache.ts';
import { getUsage, periodKey, type UsageCounts } from './usage.ts';

/** A rate-limit verdict, as the X-RateLimit-* headers report it. */
export interface LimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetMs: number;
}

export interface RateLimiting {
  consumeKey(keyHash: string, tier: 'free' | 'pro' | 'team'): Promise<LimitDecision>;
  consumeIp(ip: string): Promise<LimitDecision>;
}

export interface ValidationRequest {
  ip: string;
  /** The quota the request would use, and how much: a request that would pass it is refused. */
  metric?: Metric;
  amount?: number;
}

export interface ValidationOutcome {
  result: Assessment;
  /** The limit that applied: the key's when it was known, else the client IP's. */
  rate: LimitDecision | null;
}

export interface KeyValidator {
  validate(apiKey: string, request: ValidationRequest): Promise<ValidationOutcome>;
}

/** Validation beside the projection: the in-process path of /validate and of co-located gates. */
export class LocalValidator implements KeyValidator {
  private readonly db: Db;
  private readonly limits: RateLimiting;
  private readonly cache: KeyCache;
  private readonly usage: TtlCache<UsageCounts>;

  constructor(db: Db, limits: RateLimiting, cache: KeyCache, usage: TtlCache<UsageCounts> = new TtlCache()) {
    this.db = db;
    this.limits = limits;
    this.cache = cache;
    this.usage = usage;
  }

  async validate(apiKey: string, request: ValidationRequest): Promise<ValidationOutcome> {
    const ipRate = await this.limits.consumeIp(request.ip);
    if (!ipRate.allowed) return { result: invalid('RATE_LIMITED'), rate: ipRate };
    if (!isWellFormedKey(apiKey)) return { result: invalid('MALFORMED'), rate: ipRate };
    const keyHash = hashKey(apiKey);
    const record = await this.cache.get(keyHash, (h) => getKeyByHash(this.db, h));
    if (!record) return { result: invalid('NOT_FOUND'), rate: ipRate };
    const rate = await this.limits.consumeKey(keyHash, record.tier);
    if (!rate.allowed) return { result: invalid('RATE_LIMITED'), rate };
    const period = periodKey(new Date());
    const usage = await this.usage.get(`${keyHash}:${period}`, () => getUsage(this.db, keyHash, period));
    return { result: assessKey(record, usage, { metric: request.metric ?? 'queries', amount: request.amount ?? 1 }), rate };
  }
}
