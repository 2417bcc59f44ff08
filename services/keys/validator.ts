import type { ProjectionCache } from '../../events/projection-cache.ts';
import { assessKey, invalid, type Assessment } from './assess.ts';
import { hashKey, isWellFormedKey } from './key-format.ts';
import type { KeyCache } from './key-cache.ts';
import type { Metric } from './tiers.ts';
import { countsOf, currentPeriod, usageDocumentId, type UsageDocument } from './usage.ts';

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

/**
 * Validation beside the projections: the in-process path of /validate and of co-located gates.
 * Keys and usage are read through caches that follow the log, so a cached key costs no database
 * read; only the rate limits touch the database, a block of requests at a time.
 */
export class LocalValidator implements KeyValidator {
  private readonly limits: RateLimiting;
  private readonly keys: KeyCache;
  private readonly usage: ProjectionCache<UsageDocument>;

  constructor(limits: RateLimiting, keys: KeyCache, usage: ProjectionCache<UsageDocument>) {
    this.limits = limits;
    this.keys = keys;
    this.usage = usage;
  }

  async validate(apiKey: string, request: ValidationRequest): Promise<ValidationOutcome> {
    const ipRate = await this.limits.consumeIp(request.ip);
    if (!ipRate.allowed) return { result: invalid('RATE_LIMITED'), rate: ipRate };
    if (!isWellFormedKey(apiKey)) return { result: invalid('MALFORMED'), rate: ipRate };
    const keyHash = hashKey(apiKey);
    // Cache hits are answered without an await: this is the path every premium request takes.
    const held = this.keys.peek(keyHash);
    const record = held !== undefined ? held : await this.keys.get(keyHash);
    if (!record) return { result: invalid('NOT_FOUND'), rate: ipRate };
    const rate = await this.limits.consumeKey(keyHash, record.tier);
    if (!rate.allowed) return { result: invalid('RATE_LIMITED'), rate };
    const id = usageDocumentId(keyHash, currentPeriod());
    const heldUsage = this.usage.peekView(id);
    const usage = countsOf(heldUsage !== undefined ? heldUsage : await this.usage.get(id));
    return { result: assessKey(record, usage, { metric: request.metric ?? 'queries', amount: request.amount ?? 1 }), rate };
  }
}
