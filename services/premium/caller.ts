import type { QuotaReport } from '../keys/assess.ts';
import type { Admitted } from '../keys/gate.ts';
import type { Tier } from '../kernel/tiers.ts';
import { HttpError } from '../platform/http/errors.ts';

/**
 * Who asks: the customer a collection belongs to, the key whose quotas the work uses, and those
 * quotas as the gate saw them on this request (operators have no key and are not metered).
 */
export interface Caller {
  customerId: string;
  keyHash: string | null;
  /** The key's tier, for per-customer bounds; absent for operators, who have none. */
  tier?: Tier;
  usage?: QuotaReport;
  /** Holds quota before a use is recorded (the gate's Admitted.reserve); absent, the check is usage's. */
  reserve?: Admitted['reserve'];
  /** The last four of the key presented (keyHash is the quota's, shared by all of a team's keys). */
  keyLast4?: string | null;
  /** A team member's own key: the member's account. */
  memberUserId?: string | null;
}

/** Who the caller is, as events record it for the audit log: the member, and the key by its last four. */
export const actedBy = (caller: Caller): { memberUserId: string | null; keyLast4: string | null } => ({
  memberUserId: caller.memberUserId ?? null,
  keyLast4: caller.keyLast4 ?? null,
});

/** The retrieval API's errors: `{success: false, error, code}` with a 4xx (the face adds `success`). */
export const ragError = (status: number, code: string, message: string, details?: Record<string, unknown>): HttpError =>
  new HttpError(status, code, message, details ? { details } : {});

export const notFound = (what: string) => ragError(404, 'NOT_FOUND', `${what} not found`);
