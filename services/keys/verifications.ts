import type { Collection, Db } from 'mongodb';
import type { Logger } from '../platform/logger.ts';
import type { InvalidCode } from './assess.ts';

/** What one verification of a known key came to. Unknown and malformed keys have no key to count against. */
export type VerificationOutcome = 'VALID' | Exclude<InvalidCode, 'NOT_FOUND' | 'MALFORMED'>;
export const VERIFICATION_OUTCOMES: readonly VerificationOutcome[] = ['VALID', 'RATE_LIMITED', 'USAGE_EXCEEDED', 'DISABLED', 'EXPIRED'];

export const VERIFICATIONS_COLLECTION = 'key_verifications';

/** Statements per bulk write: replicas flushing at once stay far below FerretDB's pool of 50 (see #write). */
const STATEMENTS_PER_WRITE = 8;

/**
 * Documents each writer keeps per UTC day, every key in one of them by its hash: a flush writes at
 * most this many statements, however many keys were used (see VerificationCounts).
 */
export const VERIFICATION_SHARDS = 32;

/** Key hashes are SHA-256 hex; only such names are used as field names (no dots, no `$`). */
const FIELD_SAFE = /^[\w-]{1,128}$/;

/** The shard of a key hash: FNV-1a over its characters, so keys spread evenly whatever their form. */
export function shardOf(keyHash: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < keyHash.length; i++) h = Math.imul(h ^ keyHash.charCodeAt(i), 0x01000193);
  return (h >>> 0) % VERIFICATION_SHARDS;
}

/** One process's counts of the keys of one shard on one UTC day (`_id` day:writer:shard). */
interface ShardDocument {
  _id: string;
  day: string;
  writer: string;
  shard: number;
  keys: Record<string, { subscriptionId?: string; outcomes?: Partial<Record<VerificationOutcome, number>> }>;
}

/** The earlier form: one process's counts of one key on one UTC day (`_id` keyHash:day:writer), still read. */
interface KeyDayDocument {
  _id: string;
  keyHash: string;
  subscriptionId: string;
  day: string;
  writer: string;
  outcomes: Partial<Record<VerificationOutcome, number>>;
}

type VerificationDocument = ShardDocument | KeyDayDocument;

export interface DayCounts {
  /** The UTC day, YYYY-MM-DD. */
  day: string;
  outcomes: Record<VerificationOutcome, number>;
}

const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

interface Pending {
  keyHash: string;
  subscriptionId: string;
  day: string;
  outcomes: Record<VerificationOutcome, number>;
}

const anyCounted = (outcomes: Record<VerificationOutcome, number>): boolean => VERIFICATION_OUTCOMES.some((o) => outcomes[o] > 0);

const zeroOutcomes = (): Record<VerificationOutcome, number> =>
  Object.fromEntries(VERIFICATION_OUTCOMES.map((o) => [o, 0])) as Record<VerificationOutcome, number>;

/**
 * Verifications per key, UTC day and outcome, for the key's owner. The hot path only adds to a map;
 * a flush every few seconds writes the sums.
 *
 * Each process writes documents of its own and flushes one at a time, so no two writers ever update
 * one document: the MongoDB-wire server runs `$inc` as read, modify and blind write, which loses
 * increments under concurrent writers (see rate-limits.ts). Reads sum the writers' documents.
 *
 * A writer's day is VERIFICATION_SHARDS documents (`_id` day:writer:shard), each holding the keys
 * of its shard under `keys.<keyHash>`, so a flush is at most that many statements (4 bulk writes)
 * whether 10 keys were used or 10,000. One document per key and day made a flush one statement per
 * key used: at bench:validate's 444 keys, 444 upserts every 2 s, each a read-modify-write costing the
 * MongoDB-wire server 1.5–2 ms of CPU, about a third of a core beside the server it slowed (issue 37).
 * Documents of the earlier form (`_id` keyHash:day:writer) are still read and summed.
 *
 * *Choice:* counts held in memory when a process is killed (at most one flush interval) are lost.
 * They are statistics, not the quota: usage is metered through the log as before.
 */
export class VerificationCounts {
  readonly #collection: Collection<VerificationDocument>;
  readonly #writer: string;
  readonly #log: Logger;
  /**
   * Today's counts by key hash, since the last flush. A flush copies and zeroes them rather than
   * starting a new map: a key in use keeps one entry, instead of one made anew every interval that
   * lived just long enough to be promoted to V8's old generation and die there, one of the sites
   * that filled it fastest on /validate's path (issue 37). A key idle for a whole interval is dropped.
   */
  #today = new Map<string, Pending>();
  /**
   * Counts still to write that are not today's map: earlier days', and those a failed flush gave
   * back; by key and day, so an outage that fails flush after flush grows it by keys, not by flushes.
   */
  #earlier = new Map<string, Pending>();
  #day = '';
  #dayStarts = 0;
  #dayEnds = 0;
  #flushing: Promise<void> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;

  constructor(db: Db, options: { writer: string; log: Logger }) {
    this.#collection = db.collection<VerificationDocument>(VERIFICATIONS_COLLECTION);
    this.#writer = options.writer;
    this.#log = options.log;
  }

  async ensureIndexes(): Promise<void> {
    await this.#collection.createIndex({ shard: 1, day: 1 });
    await this.#collection.createIndex({ keyHash: 1, day: 1 });
  }

  /** Counts one verification; no I/O, no allocation once the key has been seen today (the hot path). */
  note(keyHash: string, subscriptionId: string, outcome: VerificationOutcome, now: number = Date.now()): void {
    if (now >= this.#dayEnds || now < this.#dayStarts) this.#turnDay(now);
    let entry = this.#today.get(keyHash);
    if (!entry) {
      if (!FIELD_SAFE.test(keyHash)) return; // not a key hash: nothing to count it under
      entry = { keyHash, subscriptionId, day: this.#day, outcomes: zeroOutcomes() };
      this.#today.set(keyHash, entry);
    }
    entry.outcomes[outcome]++;
  }

  #turnDay(now: number): void {
    const day = utcDay(now);
    if (day !== this.#day) {
      for (const e of this.#today.values()) if (anyCounted(e.outcomes)) this.#keep(e);
      this.#today = new Map();
      this.#day = day;
    }
    this.#dayStarts = Date.parse(`${day}T00:00:00Z`);
    this.#dayEnds = this.#dayStarts + 86_400_000;
  }

  #keep(e: Pending): void {
    const id = `${e.keyHash}:${e.day}`;
    const into = this.#earlier.get(id);
    if (!into) this.#earlier.set(id, e);
    else for (const o of VERIFICATION_OUTCOMES) into.outcomes[o] += e.outcomes[o];
  }

  /**
   * Writes what was counted since the last flush; flushes run one after another, and one that failed
   * does not stop the next (its counts wait in #earlier for it).
   */
  flush(): Promise<void> {
    const next = this.#flushing.catch(() => undefined).then(() => this.#write());
    this.#flushing = next;
    return next;
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
    const from = utcDay(since.getTime());
    const days = new Map<string, Record<VerificationOutcome, number>>();
    const add = (day: string, outcomes: Partial<Record<VerificationOutcome, number>> | undefined) => {
      if (!outcomes) return;
      const sums = days.get(day) ?? zeroOutcomes();
      for (const o of VERIFICATION_OUTCOMES) sums[o] += outcomes[o] ?? 0;
      days.set(day, sums);
    };
    if (FIELD_SAFE.test(keyHash)) {
      const field = `keys.${keyHash}`;
      const shards = await this.#collection
        .find({ shard: shardOf(keyHash), day: { $gte: from } }, { projection: { day: 1, [field]: 1 } })
        .toArray();
      for (const doc of shards) if ('keys' in doc) add(doc.day, doc.keys?.[keyHash]?.outcomes);
    }
    const earlier = await this.#collection.find({ keyHash, day: { $gte: from } }).toArray();
    for (const doc of earlier) if ('outcomes' in doc) add(doc.day, doc.outcomes);
    return [...days.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([day, outcomes]) => ({ day, outcomes }));
  }

  async #write(): Promise<void> {
    const batch = [...this.#earlier.values()];
    this.#earlier = new Map();
    for (const [keyHash, e] of this.#today) {
      if (!anyCounted(e.outcomes)) {
        this.#today.delete(keyHash);
        continue;
      }
      batch.push({ keyHash, subscriptionId: e.subscriptionId, day: e.day, outcomes: { ...e.outcomes } });
      for (const o of VERIFICATION_OUTCOMES) e.outcomes[o] = 0;
    }
    if (batch.length === 0) return;
    // One statement per shard document touched (day, shard), every key of it in that one update.
    const byDocument = new Map<string, Pending[]>();
    for (const e of batch) {
      const id = `${e.day}:${this.#writer}:${shardOf(e.keyHash)}`;
      const group = byDocument.get(id);
      if (group) group.push(e);
      else byDocument.set(id, [e]);
    }
    const statements = [...byDocument.entries()];
    // Small bulk writes: FerretDB 1.24 holds a pooled connection per statement until the command
    // ends, and commands holding more statements at once than its pool has (50) wait for each other
    // forever, hanging the whole server. One command for every key did, under bench:validate; two
    // replicas flushing 32 statements each at once did in the integration test.
    for (let i = 0; i < statements.length; i += STATEMENTS_PER_WRITE) {
      const part = statements.slice(i, i + STATEMENTS_PER_WRITE);
      try {
        await this.#collection.bulkWrite(
          part.map(([id, entries]) => {
            const first = entries[0]!;
            const inc: Record<string, number> = {};
            const set: Record<string, string> = {};
            for (const e of entries) {
              set[`keys.${e.keyHash}.subscriptionId`] = e.subscriptionId;
              // A key can come twice (a failed flush's counts beside today's): its counts add up.
              for (const o of VERIFICATION_OUTCOMES) {
                const field = `keys.${e.keyHash}.outcomes.${o}`;
                if (e.outcomes[o] > 0) inc[field] = (inc[field] ?? 0) + e.outcomes[o];
              }
            }
            return {
              updateOne: {
                filter: { _id: id },
                update: {
                  $setOnInsert: { day: first.day, writer: this.#writer, shard: shardOf(first.keyHash) },
                  $set: set,
                  $inc: inc,
                },
                upsert: true,
              },
            };
          }),
          { ordered: true },
        );
      } catch (err) {
        // This part and the rest go back for the next flush. Part of this part may have been written
        // and is then counted twice: statistics, counted again rather than lost.
        for (const [, entries] of statements.slice(i)) for (const e of entries) this.#keep(e);
        throw err;
      }
    }
  }
}
