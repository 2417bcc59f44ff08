import { MongoServerError, type Collection, type Db } from 'mongodb';
import { getJob } from './jobs.projection.ts';

/**
 * The bound on a customer's index jobs waiting or running at once (RAG_MAX_PENDING_JOBS by tier),
 * exact across replicas. Unbounded, one customer pushing at its plan's request rate queued 641 jobs
 * in 30 s, and the work of storing, queueing and tracking them took other customers' query p50 from
 * 15 to 53 ms (`npm run noisy`, push attack).
 *
 * A job holds slot k of its customer while it is queued or running: the document
 * `<customerId>#<k>`, claimed by inserting it, which is the one write MongoDB and FerretDB both make
 * atomic against the unique `_id` (FerretDB 1.24 applies read-modify-write updates without a
 * transaction). The indexer frees the slot when the job ends. Should that release be lost (a crash
 * between the job's last event and the delete), the next claim that finds every slot taken frees
 * those whose jobs have ended, so a slot cannot leak for good.
 */
interface SlotDoc {
  _id: string;
  customerId: string;
  slot: number;
  jobId: string;
  claimedAt: Date;
}

export const JOB_SLOTS_COLLECTION = 'rag_job_slots';
const DUPLICATE_KEY = 11000;
/**
 * Slots held longer are checked against their jobs when the customer has none free: a release lost
 * to a crash, or a claim whose request failed before its job was recorded, frees itself then.
 */
const CHECK_AFTER_MS = 60_000;

export class JobSlots {
  readonly #db: Db;
  readonly #slots: Collection<SlotDoc>;

  constructor(db: Db) {
    this.#db = db;
    this.#slots = db.collection<SlotDoc>(JOB_SLOTS_COLLECTION);
  }

  /**
   * Takes one of the customer's `limit` slots for the job; false when all are held by jobs still
   * under way. A refusal costs one read (the customer's few slot documents), a claim one more insert.
   */
  async claim(customerId: string, jobId: string, limit: number): Promise<boolean> {
    const held = await this.#slots.find({ customerId }).toArray();
    const taken = new Set(held.map((doc) => doc.slot));
    const free = Array.from({ length: limit }, (_, k) => k).filter((k) => !taken.has(k));
    if (free.length === 0) {
      for (const k of await this.#freeEnded(held)) free.push(k);
    }
    for (const k of free) {
      try {
        await this.#slots.insertOne({ _id: `${customerId}#${k}`, customerId, slot: k, jobId, claimedAt: new Date() });
        return true;
      } catch (err) {
        // Another replica took it first.
        if (!(err instanceof MongoServerError && err.code === DUPLICATE_KEY)) throw err;
      }
    }
    return false;
  }

  /** Frees the job's slot (idempotent: a redelivered end frees nothing twice). */
  async release(jobId: string): Promise<void> {
    await this.#slots.deleteMany({ jobId });
  }

  /** Frees the slots, among those held past CHECK_AFTER_MS, whose jobs have ended or were never recorded. */
  async #freeEnded(held: readonly SlotDoc[]): Promise<number[]> {
    const now = Date.now();
    const freed: number[] = [];
    for (const slot of held.filter((doc) => now - doc.claimedAt.getTime() > CHECK_AFTER_MS)) {
      const job = await getJob(this.#db, slot.jobId);
      if (job && job.status !== 'completed' && job.status !== 'failed') continue;
      if ((await this.#slots.deleteOne({ _id: slot._id, jobId: slot.jobId })).deletedCount === 1) freed.push(slot.slot);
    }
    return freed;
  }
}
