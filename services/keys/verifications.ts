import type { AnyBulkWriteOperation, Collection, Db } from 'mongodb';
import type { Logger } from '../platform/logger.ts';
import type { InvalidCode } from './assess.ts';

/** What one verification of a known key came to. Unknown and malformed keys have no key to count against. */
export type VerificationOutcome = 'VALID' | Exclude<InvalidCode, 'NOT_FOUND' | 'MALFORMED'>;
export const VERIFICATION_OUTCOMES: readonly VerificationOutcome[] = ['VALID', 'RATE_LIMITED', 'USAGE_EXCEEDED', 'DISABLED', 'EXPIRED'];

export const VERIFICATIONS_COLLECTION = 'key_verifications';

/** One process's counts of one key on one UTC day. */
interface VerificationDocument {
  _id: string;
  keyHash: string;
  subscriptionId: string;
  day: string;
  writer: string;
  outcomes: Partial<Record<VerificationOutcome, number>>;
}

export interface DayCounts {
  /** The UTC day, YYYY-MM-DD. */
  day: string;
  outcomes: Record<VerificationOutcome, number>;
}

const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/**
 * Verifications per key, UTC day and outcome, for the key's owner. The hot path only adds to a map;
 * a flush every few seconds writes the sums.
 *
 * Each process writes documents of its own (`_id` keyHash:day:writer) and flushes one at a time, so
 * no two writers ever update one document: the MongoDB-wire server runs `$inc` as read, modify and
 * blind write, which loses increments under concurrent writers (see rate-limits.ts). Reads sum the
 * writers' documents.
 *
 * *Choice:* counts held in memory when a process is killed (at most one flush interval) are lost.
 * They are statistics, not the quota: usage is metered through the log as before.
 */
export class VerificationCounts {
  readonly #collection: Collection<VerificationDocument>;
  readonly #writer: string;
  readonly #log: Logger;
  #pending = new Map<string, { keyHash: string; subscriptionId: string; day: string; outcomes: Map<VerificationOutcome, number> }>();
  #flushing: Promise<void> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;

  constructor(db: Db, options: { writer: string; log: Logger }) {
    this.#collection = db.collection<VerificationDocument>(VERIFICATIONS_COLLECTION);
    this.#writer = options.writer;
    this.#log = options.log;
  }

  async ensureIndexes(): Promise<void> {
    await this.#collection.createIndex({ keyHash: 1, day: 1 });
  }

  /** Counts one verification; no I/O. */
  note(key: { keyHash: string; subscriptionId: string }, outcome: VerificationOutcome, now: number = Date.now()): void {
    const day = utcDay(now);
    const id = `${key.keyHash}:${day}`;
    let entry = this.#pending.get(id);
    if (!entry) {
      entry = { keyHash: key.keyHash, subscriptionId: key.subscriptionId, day, outcomes: new Map() };
      this.#pending.set(id, entry);
    }
    entry.outcomes.set(outcome, (entry.outcomes.get(outcome) ?? 0) + 1);
  }

  /** Writes what was counted since the last flush; flushes run one after another. */
  flush(): Promise<void> {
    this.#flushing = this.#flushing.then(() => this.#write());
    return this.#flushing;
  }

  start(intervalMs: number): void {
    this.#timer = setInterval(() => {
      this.flush().catch((err: unknown) =>
        this.#log.warn({ err: String(err) }, 'verification counts: flush failed; kept for the next one'),
      );
    }, intervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush().catch((err: unknown) => this.#log.warn({ err: String(err) }, 'verification counts: last flush failed'));
  }

  /** The key's counts per UTC day from `since` on, oldest first; days without a verification are left out. */
  async read(keyHash: string, since: Date): Promise<DayCounts[]> {
    const docs = await this.#collection.find({ keyHash, day: { $gte: utcDay(since.getTime()) } }).toArray();
    const days = new Map<string, Record<VerificationOutcome, number>>();
    for (const doc of docs) {
      const sums =
        days.get(doc.day) ?? (Object.fromEntries(VERIFICATION_OUTCOMES.map((o) => [o, 0])) as Record<VerificationOutcome, number>);
      for (const o of VERIFICATION_OUTCOMES) sums[o] += doc.outcomes[o] ?? 0;
      days.set(doc.day, sums);
    }
    return [...days.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([day, outcomes]) => ({ day, outcomes }));
  }

  async #write(): Promise<void> {
    if (this.#pending.size === 0) return;
    const batch = this.#pending;
    this.#pending = new Map();
    const ops: AnyBulkWriteOperation<VerificationDocument>[] = [...batch.values()].map((e) => ({
      updateOne: {
        filter: { _id: `${e.keyHash}:${e.day}:${this.#writer}` },
        update: {
          $setOnInsert: { keyHash: e.keyHash, subscriptionId: e.subscriptionId, day: e.day, writer: this.#writer },
          $inc: Object.fromEntries([...e.outcomes].map(([o, n]) => [`outcomes.${o}`, n])),
        },
        upsert: true,
      },
    }));
    try {
      await this.#collection.bulkWrite(ops, { ordered: false });
    } catch (err) {
      // Not written: counted again in the next flush (a partial write may count some twice; the
      // server does not say which of an unordered batch landed, and these are statistics).
      for (const [id, e] of batch) {
        const into = this.#pending.get(id);
        if (!into) this.#pending.set(id, e);
        else for (const [o, n] of e.outcomes) into.outcomes.set(o, (into.outcomes.get(o) ?? 0) + n);
      }
      throw err;
    }
  }
}
