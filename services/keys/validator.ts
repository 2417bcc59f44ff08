import type { ProjectionCache } from '../../events/projection-cache.ts';
import { assessKey, invalid, type Assessment, type InvalidCode } from './assess.ts';
import { HeldAssessments } from './held-assessments.ts';
import { hashKey, isWellFormedKey } from './key-format.ts';
import type { KeyCache } from './key-cache.ts';
import type { KeyRecord } from './keys.projection.ts';
import type { QuotaReservations } from './quota-reservations.ts';
import { limitsOf, type Metric } from '../kernel/tiers.ts';
import type { VerificationCounts } from './verifications.ts';
import { countsOf, currentPeriod, usageDocumentId, type UsageDocument } from './usage.ts';

/** A rate-limit verdict, as the X-RateLimit-* headers report it. */
export interface LimitDecision {
  allowed: boolean;
  limit: number;
  /** Requests left in the current window after this one. */
  remaining: number;
  /**
   * When the current window resets, in Unix milliseconds: an instant, not a duration, so every
   * answer of one window names the same second whenever its headers are written (a duration added
   * to a later reading of the clock named the next second now and then, and a client waiting for
   * the window to turn took it at its word).
   */
  resetAt: number;
}

export interface RateLimiting {
  /** perMinute: the key's own limit, set by its owner below the tier's; undefined: the tier's. */
  consumeKey(keyHash: string, tier: 'free' | 'pro' | 'team', perMinute?: number): Promise<LimitDecision>;
  consumeIp(ip: string): Promise<LimitDecision>;
  /** The decision without a promise when the process holds what it needs, else undefined with nothing consumed. */
  keyHeld?(keyHash: string, tier: 'free' | 'pro' | 'team', perMinute?: number): LimitDecision | undefined;
  ipHeld?(ip: string): LimitDecision | undefined;
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
  /** A rate refusal given again before its window reset: the client did not wait as Retry-After said. */
  repeatedRefusal?: boolean;
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

/** Meters whose usage document id is kept; past it the map starts over (a miss only rebuilds an id). */
const MAX_USAGE_IDS = 20_000;

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
  private readonly counts: Pick<VerificationCounts, 'note'> | undefined;
  /**
   * This month's usage document id by meter: every request looked its usage up under an id built
   * anew (`<hash>:<month>`), which the map then had to flatten and hash; the meter's hash string is
   * the one the other lookups of the request already hashed.
   */
  #usageIds = new Map<string, string>();
  #usagePeriod = '';
  readonly #held = new HeldAssessments();

  constructor(
    limits: RateLimiting,
    keys: KeyCache,
    usage: ProjectionCache<UsageDocument>,
    reservations: Pick<QuotaReservations, 'reserve' | 'release'>,
    counts?: Pick<VerificationCounts, 'note'>,
  ) {
    this.limits = limits;
    this.keys = keys;
    this.usage = usage;
    this.reservations = reservations;
    this.counts = counts;
  }

  async validate(apiKey: string, request: ValidationRequest): Promise<ValidationOutcome> {
    return this.check(apiKey, request);
  }

  /**
   * validate(), answered synchronously when everything it needs is in memory (the IP's and the
   * key's rate-limit blocks, the key, its usage): the path nearly every premium request takes, so it
   * costs no promise and no turn of the event loop. Whatever is not held is awaited from that step on,
   * and nothing is consumed twice.
   */
  check(apiKey: string, request: ValidationRequest): ValidationOutcome | Promise<ValidationOutcome> {
    const ipRate = this.limits.ipHeld?.(request.ip);
    return ipRate
      ? this.#afterIp(apiKey, request, ipRate)
      : this.limits.consumeIp(request.ip).then((r) => this.#afterIp(apiKey, request, r));
  }

  #afterIp(apiKey: string, request: ValidationRequest, ipRate: LimitDecision): ValidationOutcome | Promise<ValidationOutcome> {
    if (!ipRate.allowed) return { result: invalid('RATE_LIMITED'), rate: ipRate };
    if (!isWellFormedKey(apiKey)) return { result: invalid('MALFORMED'), rate: ipRate };
    const keyHash = hashKey(apiKey);
    const held = this.keys.peek(keyHash);
    return held !== undefined
      ? this.#afterKey(keyHash, held, request, ipRate)
      : this.keys.get(keyHash).then((r) => this.#afterKey(keyHash, r, request, ipRate));
  }

  #afterKey(
    keyHash: string,
    record: KeyRecord | null,
    request: ValidationRequest,
    ipRate: LimitDecision,
  ): ValidationOutcome | Promise<ValidationOutcome> {
    if (!record) return { result: invalid('NOT_FOUND'), rate: ipRate };
    const perMinute = record.requestsPerMinute ?? undefined;
    const rate = this.limits.keyHeld?.(keyHash, record.tier, perMinute);
    if (!rate) {
      // The key's rate-limit claim (a database write) and its usage read go out together, not one
      // after the other: a key's first request (one just e-mailed) waited for both (issue 37). The
      // read is shared with the one #afterRate makes (concurrent misses of an id share a load).
      const id = this.#usageId(record.usageKeyHash ?? keyHash);
      if (this.usage.peekView(id) === undefined) this.usage.get(id).catch(() => undefined);
      return this.limits
        .consumeKey(keyHash, record.tier, perMinute)
        .then((r) => this.#afterRate(keyHash, record, request, r))
        .then((o) => this.#counted(keyHash, record, o));
    }
    const outcome = this.#afterRate(keyHash, record, request, rate);
    return outcome instanceof Promise ? outcome.then((o) => this.#counted(keyHash, record, o)) : this.#counted(keyHash, record, outcome);
  }

  /** Counts the verification for the key's owner, by outcome; every outcome here is a known key's. */
  #counted(keyHash: string, record: KeyRecord, outcome: ValidationOutcome): ValidationOutcome {
    if (this.counts) {
      const code = outcome.result.valid ? 'VALID' : outcome.result.code;
      if (code !== 'NOT_FOUND' && code !== 'MALFORMED') this.counts.note(keyHash, record.subscriptionId, code);
    }
    return outcome;
  }

  #afterRate(
    keyHash: string,
    record: KeyRecord,
    request: ValidationRequest,
    rate: LimitDecision,
  ): ValidationOutcome | Promise<ValidationOutcome> {
    if (!rate.allowed) return { result: invalid('RATE_LIMITED'), rate };
    // Every key of a subscription (a team member's, a rotation's) counts under its meter: one month, one quota.
    const id = this.#usageId(record.usageKeyHash ?? keyHash);
    const heldUsage = this.usage.peekView(id);
    if (request.metric === undefined && request.amount === undefined) {
      if (heldUsage !== undefined) return { result: this.#held.assess(keyHash, record, heldUsage), rate };
      return this.usage.get(id).then((usage) => ({ result: this.#held.assess(keyHash, record, usage), rate }));
    }
    const use = { metric: request.metric ?? 'queries', amount: request.amount ?? 1 };
    if (heldUsage !== undefined) return { result: assessKey(record, countsOf(heldUsage), use), rate };
    return this.usage.get(id).then((usage) => ({ result: assessKey(record, countsOf(usage), use), rate }));
  }

  #usageId(meter: string): string {
    const period = currentPeriod();
    if (period !== this.#usagePeriod) {
      this.#usageIds = new Map();
      this.#usagePeriod = period;
    }
    let id = this.#usageIds.get(meter);
    if (id === undefined) {
      if (this.#usageIds.size >= MAX_USAGE_IDS) this.#usageIds.clear();
      id = usageDocumentId(meter, period);
      this.#usageIds.set(meter, id);
    }
    return id;
  }

  async reserve(apiKey: string, request: ReserveRequest): Promise<Reservation> {
    const refused = (assessment: Assessment): Reservation =>
      assessment.valid
        ? { reserved: false, code: 'NOT_FOUND', error: 'API key not found' }
        : { reserved: false, code: assessment.code, error: assessment.error };
    if (!(await this.limits.consumeIp(request.ip)).allowed) return refused(invalid('RATE_LIMITED'));
    if (!isWellFormedKey(apiKey)) return refused(invalid('MALFORMED'));
    const keyHash = hashKey(apiKey);
    const record = await this.keys.get(keyHash);
    if (!record) return refused(invalid('NOT_FOUND'));
    const period = currentPeriod();
    const metered = record.usageKeyHash ?? keyHash;
    const usage = countsOf(await this.usage.get(usageDocumentId(metered, period)));
    const assessment = assessKey(record, usage, { metric: request.metric, amount: request.amount });
    if (!assessment.valid) return refused(assessment);
    const limit = limitsOf(assessment.identity.tier).quotas[request.metric];
    if (limit === -1 || request.amount <= 0) return { reserved: true, reservation: null };
    const reservation = await this.reservations.reserve({
      keyHash: metered,
      period,
      metric: request.metric,
      amount: request.amount,
      used: usage[request.metric],
      limit,
    });
    return reservation === null ? refused(invalid('USAGE_EXCEEDED')) : { reserved: true, reservation };
  }

  async release(apiKey: string, reservation: string): Promise<void> {
    if (!isWellFormedKey(apiKey)) return;
    const keyHash = hashKey(apiKey);
    // Held where reserve() held it: under the subscription's meter.
    const record = await this.keys.get(keyHash);
    await this.reservations.release(record?.usageKeyHash ?? keyHash, reservation);
  }
}
