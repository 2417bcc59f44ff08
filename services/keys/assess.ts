import type { Tier } from '../kernel/tiers.ts';
import type { KeyRecord } from './keys.projection.ts';
import { limitsOf, remaining, METRICS, type Features, type Metric } from '../kernel/tiers.ts';
import type { UsageCounts } from './usage.ts';

/** Why a key is refused: the product's {valid, error} plus a machine-readable reason. */
export type InvalidCode = 'NOT_FOUND' | 'MALFORMED' | 'EXPIRED' | 'DISABLED' | 'USAGE_EXCEEDED' | 'RATE_LIMITED';

export interface KeyIdentity {
  /** The key whose usage this use counts against: the key itself, or for a team member's key its subscription's key. */
  keyHash: string;
  tier: Tier;
  customerId: string;
  subscriptionId: string;
  /** A team member's key: keyHash above is its team's key, which remote gates must meter against too. */
  sharesQuota?: true;
  /** The presented key's last four: who acted, in the audit log (keyHash is the quota's, not the key's). */
  last4?: string;
  /** A team member's own key: the member's account, recorded as who acted. */
  memberUserId?: string;
}

export type QuotaReport = Record<Metric, { used: number; limit: number; remaining: number }>;

export type Assessment =
  | { valid: true; identity: KeyIdentity; usage: QuotaReport; features: Features }
  | { valid: false; code: InvalidCode; error: string };

export const INVALID_MESSAGES: Record<InvalidCode, string> = {
  NOT_FOUND: 'API key not found',
  MALFORMED: 'API key is malformed',
  EXPIRED: 'API key has expired',
  DISABLED: 'API key has been revoked',
  USAGE_EXCEEDED: 'monthly usage quota exceeded; upgrade for more',
  RATE_LIMITED: 'rate limit exceeded; retry later',
};

export const invalid = (code: InvalidCode): Assessment => ({ valid: false, code, error: INVALID_MESSAGES[code] });

export function quotaReport(tier: Tier, usage: UsageCounts): QuotaReport {
  const { quotas } = limitsOf(tier);
  const report = {} as QuotaReport;
  for (const m of METRICS) report[m] = { used: usage[m], limit: quotas[m], remaining: remaining(quotas[m], usage[m]) };
  return report;
}

/** Whether the key's expiry (its own, or the end of a rotation's grace period) has passed. */
export const hasExpired = (record: Pick<KeyRecord, 'expiresAt'>, now: number = Date.now()): boolean =>
  record.expiresAt != null && new Date(record.expiresAt).getTime() <= now;

/**
 * The rules of a known key (pure): revoked keys are refused, expired ones too; a key whose subscription ended stays
 * valid at the free tier; a request that would pass the tier's monthly quota is refused.
 */
export function assessKey(
  record: KeyRecord,
  usage: UsageCounts,
  request: { metric: Metric; amount: number },
  now: number = Date.now(),
): Assessment {
  if (record.status === 'revoked') return invalid('DISABLED');
  if (!record.keyHash || record.status !== 'active') return invalid('NOT_FOUND');
  if (hasExpired(record, now)) return invalid('EXPIRED');
  const limits = limitsOf(record.tier);
  const limit = limits.quotas[request.metric];
  if (limit !== -1 && usage[request.metric] + request.amount > limit) return invalid('USAGE_EXCEEDED');
  // Set one by one, not spread from conditional literals: on /validate's path, where each spread
  // cost a temporary object and a generic copy per request.
  const identity: KeyIdentity = {
    keyHash: record.usageKeyHash ?? record.keyHash,
    tier: record.tier,
    customerId: record.customerId ?? '',
    subscriptionId: record.subscriptionId,
  };
  if (record.usageKeyHash) identity.sharesQuota = true;
  if (record.last4) identity.last4 = record.last4;
  if (record.member) identity.memberUserId = record.member.userId;
  return { valid: true, identity, usage: quotaReport(record.tier, usage), features: { ...limits.features } };
}
