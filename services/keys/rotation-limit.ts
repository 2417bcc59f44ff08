import type { Collection, Db } from 'mongodb';

const HOUR_MS = 3_600_000;

interface RotationSlot {
  _id: string;
  subscriptionId: string;
  window: number;
  at: Date;
}

export type RotationAllowance = { allowed: true } | { allowed: false; retryAfterMs: number };

/**
 * Key rotations per subscription per clock hour, for every process: each rotation takes one of the
 * hour's numbered slots by inserting a document whose `_id` names it (the one write MongoDB and
 * FerretDB both make atomic), so concurrent requests cannot share a slot, and nothing is read first.
 * A rotation mails a key to the subscription's address: unlimited, it would let whoever holds a
 * leaked key or a session flood that mailbox and keep the owner's integrations broken.
 */
export class RotationLimit {
  readonly #slots: Collection<RotationSlot>;
  readonly #perHour: number;
  readonly #now: () => number;

  constructor(db: Db, perHour: number, now: () => number = Date.now) {
    this.#slots = db.collection<RotationSlot>('key_rotation_slots');
    this.#perHour = perHour;
    this.#now = now;
  }

  async ensureIndexes(): Promise<void> {
    await this.#slots.createIndex({ subscriptionId: 1, window: 1 });
  }

  async take(subscriptionId: string): Promise<RotationAllowance> {
    const now = this.#now();
    const window = Math.floor(now / HOUR_MS);
    for (let slot = 0; slot < this.#perHour; slot++) {
      try {
        await this.#slots.insertOne({ _id: `${subscriptionId}:${window}:${slot}`, subscriptionId, window, at: new Date(now) });
      } catch (err) {
        if ((err as { code?: number }).code === 11000) continue;
        throw err;
      }
      // Past hours' slots are never read again; no TTL index is needed (FerretDB has none).
      void this.#slots.deleteMany({ subscriptionId, window: { $lt: window } }).catch(() => undefined);
      return { allowed: true };
    }
    return { allowed: false, retryAfterMs: (window + 1) * HOUR_MS - now };
  }
}
