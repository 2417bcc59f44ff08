import { MongoBulkWriteError, type Collection, type OptionalUnlessRequiredId } from 'mongodb';

const DUPLICATE_KEY = 11000;
/** Documents per insertMany: a command stays small whatever the burst. */
const MAX_BATCH = 500;

interface Queued<T> {
  doc: T;
  settle: (inserted: boolean) => void;
  fail: (err: unknown) => void;
}

/**
 * Inserts that claim rate-limit blocks, gathered into one unordered insertMany per flush.
 *
 * Claims made ahead (a block while a third of the current one is left, the next window's first
 * block near the window's end) have nobody waiting on them, so they wait up to `backgroundMs` for
 * company; a claim a request waits on goes out in the same turn of the event loop, with whatever
 * else is queued. bench:validate's 1,224 keys and addresses claimed their next window's block as
 * one insert each, about 70 commands a second for a fifth of every minute, each a command the
 * driver builds and FerretDB answers in a transaction of its own (issue 37).
 *
 * An insert resolves true when its document went in, false when the `_id` was taken (another
 * process holds the block), and rejects with the error otherwise.
 */
export class BlockInserts<T extends { _id: string }> {
  readonly #collection: Collection<T>;
  readonly #backgroundMs: number;
  #queue: Queued<T>[] = [];
  #timer: NodeJS.Timeout | undefined;
  #immediate: NodeJS.Immediate | undefined;

  constructor(collection: Collection<T>, options: { backgroundMs?: number } = {}) {
    this.#collection = collection;
    this.#backgroundMs = options.backgroundMs ?? 250;
  }

  insert(doc: T, urgent: boolean): Promise<boolean> {
    const inserted = new Promise<boolean>((settle, fail) => this.#queue.push({ doc, settle, fail }));
    if (urgent) {
      this.#immediate ??= setImmediate(() => this.#flush());
    } else if (!this.#timer && !this.#immediate) {
      this.#timer = setTimeout(() => this.#flush(), this.#backgroundMs);
      this.#timer.unref();
    }
    return inserted;
  }

  /** Sends what is queued in this turn of the event loop: a request now waits on a claim made ahead. */
  hurry(): void {
    if (this.#queue.length > 0) this.#immediate ??= setImmediate(() => this.#flush());
  }

  #flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    clearImmediate(this.#immediate);
    this.#immediate = undefined;
    const queued = this.#queue;
    this.#queue = [];
    for (let i = 0; i < queued.length; i += MAX_BATCH) void this.#write(queued.slice(i, i + MAX_BATCH));
  }

  async #write(batch: Queued<T>[]): Promise<void> {
    const docs = batch.map((b) => b.doc) as OptionalUnlessRequiredId<T>[];
    try {
      await this.#collection.insertMany(docs, { ordered: false });
      for (const b of batch) b.settle(true);
    } catch (err) {
      if (!(err instanceof MongoBulkWriteError)) {
        for (const b of batch) b.fail(err);
        return;
      }
      const failed = new Map<number, number>();
      for (const e of [err.writeErrors].flat()) failed.set(e.index, e.code);
      // A write concern error, or an error the server gave without per-document detail: nothing is known.
      const detailed = failed.size > 0 && !err.writeConcernError;
      batch.forEach((b, i) => {
        const code = failed.get(i);
        if (!detailed) b.fail(err);
        else if (code === undefined) b.settle(true);
        else if (code === DUPLICATE_KEY) b.settle(false);
        else b.fail(err);
      });
    }
  }
}
