import { createRequire } from 'node:module';
import { MongoServerError, type Collection, type Db } from 'mongodb';
import { RateLimiterRes, type RateLimiterStoreAbstract } from 'rate-limiter-flexible';

/**
 * A rate-limiter-flexible store, shared by every process through MongoDB, that touches the
 * database once per block of requests instead of once (or more) per request.
 *
 * Windows are fixed and aligned to the clock (window w covers [w·d, (w+1)·d)). A window's budget of
 * `points` is cut into blocks of `block` requests; a process claims block k of a window by inserting
 * the document `<key>#<w>#<k>`. An insert against the unique `_id` is the one write both MongoDB and
 * FerretDB make atomic (FerretDB 1.24 applies `$inc` as read-modify-write, losing increments under
 * concurrency), so each block is granted to exactly one process and no more than `points` requests
 * are admitted per window. No reads are needed at all, which matters on FerretDB, whose lookups
 * scan the collection. The price: a process may hold up to `block - 1` unused requests of its last
 * block when the window ends, so with several processes a key may be refused slightly early.
 */
interface BlockDoc {
  _id: string;
  key: string;
  window: number;
  block: number;
  purgeAt: Date;
}

interface Local {
  window: number;
  /** The next block number to try claiming; blocks below it are taken (by us or others). */
  nextBlock: number;
  /** Requests left in the block we hold, and the count that block's first request stands for. */
  left: number;
  consumedBase: number;
  claiming: Promise<void> | undefined;
}

interface Count {
  consumed: number;
  expireMs: number;
  first: boolean;
}

const DUPLICATE_KEY = 11000;
const StoreAbstract = createRequire(import.meta.url)('rate-limiter-flexible/lib/RateLimiterStoreAbstract.js') as typeof RateLimiterStoreAbstract;

export class MongoBlockLimiter extends StoreAbstract {
  readonly #blocks: Collection<BlockDoc>;
  readonly #block: number;
  readonly #local = new Map<string, Local>();

  constructor(db: Db, collection: string, opts: { keyPrefix: string; points: number; duration: number; block: number }) {
    super({ keyPrefix: opts.keyPrefix, points: opts.points, duration: opts.duration, storeClient: db });
    this.#blocks = db.collection<BlockDoc>(collection);
    this.#block = Math.max(1, Math.min(opts.points, Math.floor(opts.block)));
  }

  async _upsert(rlKey: string, points: number, msDuration: number, forceExpire = false): Promise<Count> {
    if (forceExpire || points !== 1) throw new Error('MongoBlockLimiter supports consuming one point at a time only');
    for (;;) {
      const now = Date.now();
      const window = Math.floor(now / msDuration);
      const expireMs = (window + 1) * msDuration;
      let local = this.#local.get(rlKey);
      if (!local || local.window !== window) {
        local = { window, nextBlock: 0, left: 0, consumedBase: 0, claiming: undefined };
        this.#local.set(rlKey, local);
      }
      if (local.left > 0) {
        local.left -= 1;
        local.consumedBase += 1;
        return { consumed: local.consumedBase, expireMs, first: local.consumedBase === 1 };
      }
      // One claim at a time per key in this process; the others wait for it and look again (a claim
      // in flight may be for the last block, so "no blocks left" is only known once it is done).
      if (local.claiming) {
        await local.claiming;
        continue;
      }
      const blocks = Math.ceil(this.points / this.#block);
      if (local.nextBlock >= blocks) return { consumed: this.points + 1, expireMs, first: false };
      const claim = this.#claim(rlKey, local, msDuration, blocks).finally(() => {
        if (local.claiming === claim) local.claiming = undefined;
      });
      local.claiming = claim;
      await claim;
    }
  }

  _getRateLimiterRes(_rlKey: string, _changedPoints: number, count: Count): RateLimiterRes {
    return new RateLimiterRes(Math.max(this.points - count.consumed, 0), Math.max(count.expireMs - Date.now(), 0), count.consumed, count.first);
  }

  async _get(): Promise<Count | null> {
    return null;
  }

  async _delete(rlKey: string): Promise<boolean> {
    this.#local.delete(rlKey);
    const { deletedCount } = await this.#blocks.deleteMany({ key: rlKey });
    return deletedCount > 0;
  }

  /** Claims the lowest free block of the window, or learns that none is left. */
  async #claim(rlKey: string, local: Local, msDuration: number, blocks: number): Promise<void> {
    while (local.nextBlock < blocks) {
      const k = local.nextBlock;
      local.nextBlock += 1;
      try {
        await this.#blocks.insertOne({
          _id: `${rlKey}#${local.window}#${k}`,
          key: rlKey,
          window: local.window,
          block: k,
          purgeAt: new Date((local.window + 2) * msDuration),
        });
      } catch (err) {
        if (err instanceof MongoServerError && err.code === DUPLICATE_KEY) continue;
        local.nextBlock = k; // not claimed: try it again next time
        throw err;
      }
      local.left = Math.min(this.#block, this.points - k * this.#block);
      // Requests before this block are counted as used (by whoever holds them).
      local.consumedBase = k * this.#block;
      return;
    }
  }
}
