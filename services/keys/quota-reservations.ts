import { randomUUID } from 'node:crypto';
import { MongoBulkWriteError, type Collection, type Db } from 'mongodb';
import type { Metric } from '../kernel/tiers.ts';

/**
 * Monthly quotas reserved before a use is served, so that concurrent requests cannot pass a quota
 * together (each one checking a count that does not yet hold the others).
 *
 * A quota of N has N numbered slots per key, metric and month. Using one claims the lowest free slot
 * above the count the projection shows, by inserting a document whose `_id` names the slot: the one
 * write MongoDB and FerretDB both make atomic (FerretDB runs conditional updates as read, modify,
 * write; see rate-limits.ts). 50 requests at N - 1 all try slot N, one insert wins and the others find
 * no slot left. Being in the database, this holds across processes and hosts. A slot stays claimed
 * once its use is counted (the projection's count is then at or above it, and no claim looks below
 * the count); a use that is not served gives its slots back (release).
 */

export interface QuotaSlot {
  /** `keyHash:period:metric:slot`, unique by construction. */
  _id: string;
  keyHash: string;
  period: string;
  metric: Metric;
  slot: number;
  reservation: string;
  at: Date;
}

export interface QuotaClaim {
  keyHash: string;
  /** The month the use counts against (usage.ts periodKey). */
  period: string;
  metric: Metric;
  amount: number;
  /** The use the projection has counted so far this month. */
  used: number;
  /** The tier's quota; never -1 (unlimited quotas need no reservation). */
  limit: number;
}

export const QUOTA_RESERVATIONS_COLLECTION = 'quota_reservations';

/**
 * A slot above the count this long after its claim belongs to a process that died between claiming
 * and recording (or whose record the projection has not counted in all that time): it is given back
 * when the quota would otherwise refuse. Far longer than the projection's usual lag of milliseconds.
 */
const DEFAULT_STALE_MS = 5 * 60_000;

const DUPLICATE_KEY = 11000;

export class QuotaReservations {
  readonly #slots: Collection<QuotaSlot>;
  readonly #staleMs: number;

  constructor(db: Db, options: { collection?: string; staleMs?: number } = {}) {
    this.#slots = db.collection<QuotaSlot>(options.collection ?? QUOTA_RESERVATIONS_COLLECTION);
    this.#staleMs = options.staleMs ?? DEFAULT_STALE_MS;
  }

  async ensureIndexes(): Promise<void> {
    await this.#slots.createIndex({ reservation: 1 });
    await this.#slots.createIndex({ keyHash: 1, period: 1, metric: 1, slot: 1 });
  }

  /** Claims `amount` slots within the quota; the reservation's id, or null when there is no room. */
  async reserve(claim: QuotaClaim): Promise<string | null> {
    const { keyHash, period, metric, amount, used, limit } = claim;
    if (used + amount > limit) return null;
    const reservation = randomUUID();
    const at = new Date();
    let held = 0;
    let next = used + 1;
    let freedStale = false;
    while (held < amount) {
      const wanted = amount - held;
      if (next + wanted - 1 > limit) {
        if (!freedStale && (await this.#freeStale(claim, at))) {
          freedStale = true;
          next = used + 1;
          continue;
        }
        // Under contention two claims can each hold part of what both need: both give it back.
        await this.release(keyHash, reservation);
        return null;
      }
      const slots: QuotaSlot[] = [];
      for (let slot = next; slot < next + wanted; slot++) {
        slots.push({ _id: `${keyHash}:${period}:${metric}:${slot}`, keyHash, period, metric, slot, reservation, at });
      }
      next += wanted;
      held += await this.#insertFree(slots);
    }
    return reservation;
  }

  /** Gives a reservation's slots back (its use was not served). */
  async release(keyHash: string, reservation: string): Promise<void> {
    await this.#slots.deleteMany({ keyHash, reservation });
  }

  /** Deletes the slots of months before `period` (no claim looks at them again); returns how many. */
  async sweep(period: string): Promise<number> {
    const { deletedCount } = await this.#slots.deleteMany({ period: { $lt: period } });
    return deletedCount;
  }

  /** Inserts the slots nobody holds yet; how many it inserted. */
  async #insertFree(slots: QuotaSlot[]): Promise<number> {
    try {
      const { insertedCount } = await this.#slots.insertMany(slots, { ordered: false });
      return insertedCount;
    } catch (err) {
      if (!(err instanceof MongoBulkWriteError)) throw err;
      const errors = Array.isArray(err.writeErrors) ? err.writeErrors : [err.writeErrors];
      if (errors.some((e) => e.code !== DUPLICATE_KEY)) throw err;
      return slots.length - errors.length;
    }
  }

  async #freeStale(claim: QuotaClaim, now: Date): Promise<boolean> {
    const { deletedCount } = await this.#slots.deleteMany({
      keyHash: claim.keyHash,
      period: claim.period,
      metric: claim.metric,
      slot: { $gt: claim.used },
      at: { $lt: new Date(now.getTime() - this.#staleMs) },
    });
    return deletedCount > 0;
  }
}
