import type { Collection, Db } from 'mongodb';

interface StartsDocument {
  _id: string;
  /** Times the job was started. */
  starts: number;
  /** Starts that ended without the job ending: the service stopped, or an outage (not crashes). */
  interrupted: number;
}

/**
 * How often an index job has started without ending: operational state, not a projection (a
 * replay of the log does not know which starts crashed). A start that neither ended nor was
 * interrupted cleanly is one whose process died mid-job; counting them is how a job that kills
 * its process every time (a native crash, the heap of the whole process) is found and stopped.
 */
export class JobStarts {
  readonly #collection: Collection<StartsDocument>;

  constructor(db: Db) {
    this.#collection = db.collection<StartsDocument>('rag_job_starts');
  }

  /** Records a start; returns the earlier starts that died mid-job. */
  async begin(jobId: string): Promise<number> {
    const doc = await this.#collection.findOneAndUpdate(
      { _id: jobId },
      { $inc: { starts: 1 }, $setOnInsert: { interrupted: 0 } },
      { upsert: true, returnDocument: 'after' },
    );
    if (!doc) return 0;
    return Math.max(0, doc.starts - 1 - doc.interrupted);
  }

  /** The start now running ended short for a reason that is not the job's (a stop, an outage). */
  async stoppedCleanly(jobId: string): Promise<void> {
    await this.#collection.updateOne({ _id: jobId }, { $inc: { interrupted: 1 } });
  }

  /** The job ended (completed or failed): nothing to count any more. */
  async end(jobId: string): Promise<void> {
    await this.#collection.deleteOne({ _id: jobId });
  }
}
