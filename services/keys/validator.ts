import type { ProjectionCache } from '../../events/projection-cache.ts';
import { assessKey, invalid, type Assessment, type InvalidCode } from './assess.ts';
import { hashKey, isWellFormedKey } from './key-format.ts';
import type { KeyCache } from './key-cache.ts';
import type { QuotaReservations } from './quota-reservations.ts';
import { limitsOf, type Metric } from './tiers.ts';
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

export interface ReserveRequest {
  ip: string;
  metric: Metric;
  amount: number;
}

/**
 * A use held against the quota until it is recorded (reservation null: the quota is unlimited, or
 * the use is 0), or why not.
 */
export type Reservation = { reserved: true; reservation: string | null } | { reserved: false; code: InvalidCode; error: string };

export interface KeyValidator {
  validate(apiKey: string, request: ValidationRequest): Promise<ValidationOutcome>;
  /**
   * Holds `amount` of the key's `metric` quota for a use about to be recorded, so concurrent uses
   * cannot pass the quota together. Counts against the client IP's rate limit only: the request it
   * serves was counted against the key's by validate().
   */
  reserve(apiKey: string, request: ReserveRequest): Promise<Reservation>;
  /** Gives a reservation back: its use was not served. */
  release(apiKey: string, reservation: string): Promise<void>;
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

  private readonly reservations: Pick<QuotaReservations, 'reserve' | 'release'>;

  constructor(limits: RateLimiting, keys: KeyCache, usage: ProjectionCache<UsageDocument>, reservations: Pick<QuotaReservations, 'reserve' | 'release'>) {
    this.limits = limits;
    this.keys = keys;
    this.usage = usage;
    this.reservations = reservations;
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

  async reserve(apiKey: string, request: ReserveRequest): Promise<Reservation> {
    const refused = (assessment: Assessment): Reservation =>
      assessment.valid ? { reserved: false, code: 'NOT_FOUND', error: 'API key not found' } : { reserved: false, code: assessment.code, error: assessment.error };
    if (!(await this.limits.consumeIp(request.ip)).allowed) return refused(invalid('RATE_LIMITED'));
    if (!isWellFormedKey(apiKey)) return refused(invalid('MALFORMED'));
    const keyHash = hashKey(apiKey);
    const record = await this.keys.get(keyHash);
    if (!record) return refused(invalid('NOT_FOUND'));
    const period = currentPeriod();
    const usage = countsOf(await this.usage.get(usageDocumentId(keyHash, period)));
    const assessment = assessKey(record, usage, { metric: request.metric, amount: request.amount });
    if (!assessment.valid) return refused(assessment);
    const limit = limitsOf(assessment.identity.tier).quotas[request.metric];
    if (limit === -1 || request.amount <= 0) return { reserved: true, reservation: null };
    const reservation = await this.reservations.reserve({ keyHash, period, metric: request.metric, amount: request.amount, used: usage[request.metric], limit });
    return reservation === null ? refused(invalid('USAGE_EXCEEDED')) : { reserved: true, reservation };
  }

  async release(apiKey: string, reservation: string): Promise<void> {
    if (isWellFormedKey(apiKey)) await this.reservations.release(hashKey(apiKey), reservation);
  }
}
