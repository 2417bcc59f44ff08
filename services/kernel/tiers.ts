// The shared kernel every context may import: the plans and their limits are spoken of by accounts,
// keys, billing, mailer, rag, vision, integration and mcp alike, so they belong to none of them.

/** The plans a key can be on, cheapest first. */
export const TIERS = ['free', 'pro', 'team'] as const;
export type Tier = (typeof TIERS)[number];

/** Whether a string from outside (a config value, another service's answer) names a tier. */
export const isTier = (value: string): value is Tier => (TIERS as readonly string[]).includes(value);

/**
 * The one tier table: rate limits, monthly quotas and features. /validate, /usage, the gate and
 * the rate limiter all read it, so a tier change is one edit here.
 */
export type Metric = 'queries' | 'filesIndexed' | 'screenshotsAnalyzed';
export const METRICS: readonly Metric[] = ['queries', 'filesIndexed', 'screenshotsAnalyzed'];

/** A quota of -1 means unlimited (kept as a number so it survives JSON and Avro unchanged). */
export const UNLIMITED = -1;

export interface Features {
  readonly visionRAG: boolean;
  readonly unlimitedIndexing: boolean;
  readonly unlimitedQueries: boolean;
  readonly prioritySupport: boolean;
}

export interface TierLimits {
  readonly requestsPerMinute: number;
  /** Per UTC calendar month (see periodOf). */
  readonly quotas: Readonly<Record<Metric, number>>;
  readonly features: Features;
}

const tier = (limits: TierLimits): TierLimits =>
  Object.freeze({ ...limits, quotas: Object.freeze({ ...limits.quotas }), features: Object.freeze({ ...limits.features }) });

const ALL_FEATURES: Features = { visionRAG: true, unlimitedIndexing: true, unlimitedQueries: true, prioritySupport: true };
const ALL_UNLIMITED: Record<Metric, number> = { queries: UNLIMITED, filesIndexed: UNLIMITED, screenshotsAnalyzed: UNLIMITED };

// Frozen so that no reader can change a limit for everyone by mutating what it was handed.
export const TIER_TABLE: Readonly<Record<Tier, TierLimits>> = Object.freeze({
  free: tier({
    requestsPerMinute: 60,
    quotas: { queries: 100, filesIndexed: 1000, screenshotsAnalyzed: 0 },
    features: { visionRAG: false, unlimitedIndexing: false, unlimitedQueries: false, prioritySupport: false },
  }),
  pro: tier({ requestsPerMinute: 600, quotas: ALL_UNLIMITED, features: ALL_FEATURES }),
  team: tier({ requestsPerMinute: 6000, quotas: ALL_UNLIMITED, features: ALL_FEATURES }),
});

export function limitsOf(t: Tier): TierLimits {
  return TIER_TABLE[t];
}

/** What is left of a quota: unlimited stays -1, an exhausted or overrun quota is 0. */
export function remaining(limit: number, used: number): number {
  if (limit === UNLIMITED) return UNLIMITED;
  return Math.max(0, limit - used);
}

export interface Period {
  /** First instant of the UTC calendar month. */
  start: Date;
  /** First instant of the next UTC month, when the quotas reset. */
  resetDate: Date;
}

export function periodOf(date: Date): Period {
  if (Number.isNaN(date.getTime())) throw new RangeError('periodOf: invalid date');
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth();
  // Date.UTC carries month 12 into January of the next year.
  return { start: new Date(Date.UTC(year, month, 1)), resetDate: new Date(Date.UTC(year, month + 1, 1)) };
}
