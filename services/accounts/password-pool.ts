import { Worker } from 'node:worker_threads';

export type HashJob =
  | { id: number; op: 'hash'; password: string; cost: number }
  | { id: number; op: 'compare'; password: string; hash: string };

export type HashOutcome = { id: number; ok: true; value: string | boolean } | { id: number; ok: false; error: string };

/** A job as callers give it; the pool numbers it. */
export type JobInput = WithoutId<HashJob>;
type WithoutId<J> = J extends HashJob ? Omit<J, 'id'> : never;

/** There are already `queue` hashes waiting for a thread: the caller should shed the request. */
export class HashQueueFull extends Error {
  constructor() {
    super('every password hashing thread is busy and the queue is full');
    this.name = 'HashQueueFull';
  }
}

interface Pending {
  job: HashJob;
  resolve: (value: string | boolean) => void;
  reject: (err: Error) => void;
}

interface Slot {
  worker: Worker;
  running: Pending | undefined;
}

const WORKER_URL = new URL('./password-worker.ts', import.meta.url);

/**
 * bcrypt on a few worker threads, so that a burst of sign-ups and logins costs CPU on those threads
 * and not time on the event loop that answers every other request. Threads start on first use and
 * are replaced if one dies. Waiting work is bounded: past `queue` waiting jobs, run() refuses at
 * once, since a request that would wait behind hundreds of hashes is better answered 503 now.
 */
export class HashPool {
  readonly #threads: number;
  readonly #queueLimit: number;
  readonly #slots: Slot[] = [];
  readonly #waiting: Pending[] = [];
  #nextId = 1;
  #closed = false;

  constructor(options: { threads: number; queue: number }) {
    this.#threads = Math.max(1, options.threads);
    this.#queueLimit = Math.max(0, options.queue);
  }

  run(input: JobInput): Promise<string | boolean> {
    if (this.#closed) return Promise.reject(new Error('password hashing pool is closed'));
    const idle = this.#idleSlot();
    if (!idle && this.#waiting.length >= this.#queueLimit) return Promise.reject(new HashQueueFull());
    return new Promise((resolve, reject) => {
      const pending: Pending = { job: { ...input, id: this.#nextId++ } as HashJob, resolve, reject };
      if (idle) this.#start(idle, pending);
      else this.#waiting.push(pending);
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    const gone = new Error('password hashing pool is closed');
    for (const pending of this.#waiting.splice(0)) pending.reject(gone);
    const slots = this.#slots.splice(0);
    for (const slot of slots) slot.running?.reject(gone);
    await Promise.all(slots.map((slot) => slot.worker.terminate()));
  }

  #idleSlot(): Slot | undefined {
    const idle = this.#slots.find((slot) => !slot.running);
    if (idle || this.#slots.length >= this.#threads) return idle;
    return this.#spawn();
  }

  #spawn(): Slot {
    const slot: Slot = { worker: new Worker(WORKER_URL), running: undefined };
    slot.worker.on('message', (outcome: HashOutcome) => {
      const pending = slot.running;
      if (!pending || pending.job.id !== outcome.id) return;
      slot.running = undefined;
      if (outcome.ok) pending.resolve(outcome.value);
      else pending.reject(new Error(outcome.error));
      this.#next(slot);
    });
    const lost = (err: Error) => {
      const index = this.#slots.indexOf(slot);
      if (index < 0) return; // closed, or already replaced
      this.#slots.splice(index, 1);
      slot.running?.reject(err);
      slot.running = undefined;
      const queued = this.#waiting.shift();
      if (queued && !this.#closed) this.#start(this.#spawn(), queued);
    };
    slot.worker.on('error', lost);
    slot.worker.on('exit', (code) => lost(new Error(`password hashing thread exited with code ${code}`)));
    this.#slots.push(slot);
    return slot;
  }

  #start(slot: Slot, pending: Pending): void {
    slot.running = pending;
    slot.worker.postMessage(pending.job);
  }

  #next(slot: Slot): void {
    const queued = this.#waiting.shift();
    if (queued) this.#start(slot, queued);
  }
}
