import { TIERS } from '../kernel/tiers.ts';
import { BoundedCounter } from '../platform/metrics.ts';
import { INVALID_MESSAGES, type InvalidCode } from './assess.ts';
import type { ValidationOutcome } from './validator.ts';

const VALIDATION_CODES = ['VALID', ...(Object.keys(INVALID_MESSAGES) as InvalidCode[])] as const;

/** What keys counts for the dashboard and alerts (deploy/grafana, deploy/prometheus). */
export const keyMetrics = {
  validations: new BoundedCounter({
    name: 'svc_key_validations_total',
    help: 'POST /validate answers by outcome: VALID, or the refusal code (NOT_FOUND, DISABLED, USAGE_EXCEEDED, RATE_LIMITED, ...)',
    labels: { code: VALIDATION_CODES },
  }),
  rateLimited: new BoundedCounter({
    name: 'svc_rate_limited_total',
    help: 'Requests a rate limit refused (answered 429), by the tier of the per-key limit, or "ip" for the per-client-IP limit met before the key',
    labels: { tier: [...TIERS, 'ip'] as const },
  }),
};

/** Counts a /validate outcome by its code and hands it on. */
export function counted(outcome: ValidationOutcome): ValidationOutcome {
  keyMetrics.validations.inc({ code: outcome.result.valid ? 'VALID' : outcome.result.code });
  return outcome;
}
