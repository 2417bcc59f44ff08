import { assessKey, hasExpired, type Assessment } from './assess.ts';
import type { KeyRecord } from './keys.projection.ts';
import { countsOf, type UsageDocument } from './usage.ts';

/** One query: what a verification that names no metric uses. */
const DEFAULT_USE = { metric: 'queries', amount: 1 } as const;

/** Keys whose assessment is kept; past it the map starts over (a miss only assesses again). */
const MAX_HELD = 20_000;

interface Held {
  record: KeyRecord;
  usage: UsageDocument | null;
  result: Assessment;
}

/**
 * The assessment of a key's plain verification (no metric named: POST /validate's usual body), kept
 * while the key's record and its usage document are the very objects the caches hold. Any change the
 * log brings (a revocation, a downgrade, a use counted) gives the caches a new object, so the next
 * verification assesses again; expiry, the one rule that moves with the clock, is checked every time.
 * Assessing anew cost every request an identity, a quota report and a features copy, and the answer's
 * body was built again from them (issue 37). What is kept is frozen: every caller shares it.
 */
export class HeldAssessments {
  readonly #byKey = new Map<string, Held>();

  assess(keyHash: string, record: KeyRecord, usage: UsageDocument | null, now: number = Date.now()): Assessment {
    const held = this.#byKey.get(keyHash);
    if (held !== undefined && held.record === record && held.usage === usage && !hasExpired(record, now)) return held.result;
    const result = assessKey(record, countsOf(usage), DEFAULT_USE, now);
    if (!result.valid) {
      if (held !== undefined) this.#byKey.delete(keyHash);
      return result;
    }
    if (held === undefined && this.#byKey.size >= MAX_HELD) this.#byKey.clear();
    const shared = freezeAssessment(result);
    this.#byKey.set(keyHash, { record, usage, result: shared });
    return shared;
  }
}

function freezeAssessment(result: Extract<Assessment, { valid: true }>): Assessment {
  Object.freeze(result.identity);
  for (const report of Object.values(result.usage)) Object.freeze(report);
  Object.freeze(result.usage);
  Object.freeze(result.features);
  return Object.freeze(result);
}
