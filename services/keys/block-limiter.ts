import { createRequire } from 'node:module';
import type { Collection, Db } from 'mongodb';
import { RateLimiterRes, type RateLimiterStoreAbstract } from 'rate-limiter-flexible';
import { BlockInserts } from './block-inserts.ts';
import type { LimitDecision } from './validator.ts';

/**
 * A rate-limiter-flexible store, shared by every process through MongoDB, that touches the
 * database once per block of requests instead of once (or more) per request.
 *
 * Windows are fixed and aligned to the clock (window w covers [w·d, (w+1)·d), moved by `offsetMs`).
 * A window's budget of `points` is cut into blocks of `block` requests; a process claims block k of
 * a window by inserting the document `<key>#<w>#<k>`. An insert against the unique `_id` is the one
 * write both MongoDB and FerretDB make atomic (FerretDB 1.24 applies `$inc` as read-modify-write,
 * losing increments under concurrency), so each block is granted to exactly one process and no more
 * than `points` requests are admitted per window. No reads are needed at all, which matters on
 * FerretDB, whose lookups scan the collection.
 *
 * So that requests seldom wait for an insert, a process claims its next block while a third to two
 * thirds of the current one is left, and the next window's first block during the last 30 % to
 * 2 % of a window (spread per key, so busy keys do not all claim at once: over the last tenth,
 * bench:validate's 888 keys and addresses claimed about 185 blocks a second for 5 s of every minute,
 * a burst of inserts the database served in a queue beside the requests; over 30 %, about 50). The price: a
 * process may hold up to a block and two thirds it never spends when the window ends, so with
 * several processes a key may be refused that much early per process; it is never admitted past
 * its limit. With blocks of one request nothing is claimed ahead and the count is exact.
 */
export interface BlockDoc {
  _id: string;
  key: string;
  window: number;
  block: number;
  purgeAt: Date;
}

/** A block this process holds: its number and the requests of it not yet spent. */
interface Held {
  block: number;
  left: number;
}

interface Local {
  window: number;
  /** The next block number to try claiming; blocks below it are taken (by us or others). */
  nextBlock: number;
  /** Requests left in the block being spent, and the count its next request stands for. */
  left: number;
  consumed: number;
  /** A block claimed ahead, spent once the current one is. */
  reserve: Held | undefined;
  /** The claim in flight for this window, if any (one at a time per key). */
  claiming: Promise<void> | undefined;
  /** Block 0 of the next window, claimed near the end of this one. */
  ahead: Ahead | undefined;
  /**
   * This key's points for claiming ahead, drawn per key and window: keys under the same load would
   * otherwise all claim in the same millisecond, a burst of inserts the database serves in a queue.
   */
  jitter: number;
}

/** A claim of the next window's first block; `granted` is set once the database has granted it. */
interface Ahead {
  window: number;
  claim: Promise<Held | null>;
  granted: Held | undefined;
}

interface Count {
  consumed: number;
  expireMs: number;
  first: boolean;
}

const StoreAbstract = createRequire(import.meta.url)(
  'rate-limiter-flexible/lib/RateLimiterStoreAbstract.js',
) as typeof RateLimiterStoreAbstract;

export class MongoBlockLimiter extends StoreAbstract {
  readonly #blocks: Collection<BlockDoc>;
  readonly #inserts: BlockInserts<BlockDoc>;
  readonly #block: number;
  /** Blocks per window. */
  readonly #blockCount: number;
  /** Where windows start, after the clock's multiples of the duration. */
  readonly #offset: number;
  /**
   * By the caller's key, not rate-limiter-flexible's prefixed one: the held path then looks up the
   * string it was given (its hash already computed by earlier lookups of it) instead of building
   * and hashing `<prefix>:<key>` on every request.
   */
  readonly #local = new Map<string, Local>();
  readonly #jitter: () => number;
  #prunedWindow = -1;

  /**
   * `offsetMs` moves every window that far past the clock's multiples of the duration (default 0): two
   * limiters half a window apart, both consumed, refuse a burst that straddles either one's boundary.
   */
  constructor(
    db: Db,
    collection: string,
    opts: {
      keyPrefix: string;
      points: number;
      duration: number;
      block: number;
      offsetMs?: number;
      inserts?: BlockInserts<BlockDoc>;
      /** Where in its ranges a key claims ahead, drawn per key and window (0–1; default random). Tests fix it. */
      jitter?: () => number;
    },
  ) {
    super({ keyPrefix: opts.keyPrefix, points: opts.points, duration: opts.duration, storeClient: db });
    this.#blocks = db.collection<BlockDoc>(collection);
    // Limiters on one collection may share theirs, so one flush carries every limiter's claims.
    this.#inserts = opts.inserts ?? new BlockInserts(this.#blocks);
    this.#block = Math.max(1, Math.min(opts.points, Math.floor(opts.block)));
    this.#blockCount = Math.ceil(opts.points / this.#block);
    this.#offset = opts.offsetMs ?? 0;
    this.#jitter = opts.jitter ?? Math.random;
  }

  /** Blocks larger than one request are claimed ahead, so requests seldom wait for the database. */
  get #claimsAhead(): boolean {
    return this.#block > 1;
  }

  /**
   * One request admitted from what this process already holds, decided synchronously; undefined
   * when that is not enough to decide (a claim, a refusal or a new window), for consume() to settle.
   * Most requests end here: rate-limiter-flexible's consume() costs a dozen promises, which on the
   * hot path showed as a tenth of POST /validate's throughput.
   */
  consumeHeld(key: string): LimitDecision | undefined {
    const msDuration = this.duration * 1000;
    const now = Date.now();
    const local = this.#takeHeld(key, msDuration, now);
    if (!local) return undefined;
    return {
      allowed: true,
      limit: this.points,
      remaining: Math.max(this.points - local.consumed, 0),
      resetAt: this.#windowEnd(local.window, msDuration),
    };
  }

  /**
   * When the window of a decision from consume() resets. rate-limiter-flexible hands back the time
   * left as of its own reading of the clock, so that plus a later reading lies a little past the
   * window's end: the end is the last boundary at or before it.
   */
  resetAt(msBeforeNext: number, now = Date.now()): number {
    const msDuration = this.duration * 1000;
    return Math.floor((now + msBeforeNext - this.#offset) / msDuration) * msDuration + this.#offset;
  }

  /** When window number `window` ends, in Unix ms. */
  #windowEnd(window: number, msDuration: number): number {
    return (window + 1) * msDuration + this.#offset;
  }

  /** Takes one request from the key's block of the current window; the key's state after, or undefined with nothing taken. */
  #takeHeld(key: string, msDuration: number, now: number): Local | undefined {
    const window = Math.floor((now - this.#offset) / msDuration);
    const known = this.#local.get(key);
    const local = known?.window === window ? known : known && this.#enterOnGranted(key, known, window);
    if (!local) return undefined;
    if (local.left === 0 && local.reserve) {
      this.#spend(local, local.reserve);
      local.reserve = undefined;
    }
    if (local.left === 0) return undefined;
    local.left -= 1;
    local.consumed += 1;
    if (this.#claimsAhead) this.#claimAhead(key, local, msDuration, this.#windowEnd(window, msDuration) - now);
    return local;
  }

  async _upsert(rlKey: string, points: number, msDuration: number, forceExpire = false): Promise<Count> {
    if (forceExpire || points !== 1) throw new Error('MongoBlockLimiter supports consuming one point at a time only');
    const key = this.parseKey(rlKey);
    for (;;) {
      const now = Date.now();
      const window = Math.floor((now - this.#offset) / msDuration);
      const expireMs = this.#windowEnd(window, msDuration);
      const held = this.#takeHeld(key, msDuration, now);
      if (held) return { consumed: held.consumed, expireMs, first: held.consumed === 1 };
      const known = this.#local.get(key);
      const local = known?.window === window ? known : await this.#newWindow(key, window, known);
      if (local.window !== window) continue; // the window turned while we waited for a claim ahead
      if (local.left > 0 || local.reserve) continue;
      // A claim in flight may be for the last block, so "no blocks left" is only known once it is done.
      if (local.claiming) {
        this.#inserts.hurry(); // a claim made ahead may still wait for company: a request waits on it now
        await local.claiming;
        continue;
      }
      if (local.nextBlock >= this.#blockCount) return { consumed: this.points + 1, expireMs, first: false };
      await this.#startClaim(key, local, msDuration, true);
    }
  }

  _getRateLimiterRes(_rlKey: string, _changedPoints: number, count: Count): RateLimiterRes {
    return new RateLimiterRes(
      Math.max(this.points - count.consumed, 0),
      Math.max(count.expireMs - Date.now(), 0),
      count.consumed,
      count.first,
    );
  }

  async _get(): Promise<Count | null> {
    return null;
  }

  async _delete(rlKey: string): Promise<boolean> {
    this.#local.delete(this.parseKey(rlKey));
    const { deletedCount } = await this.#blocks.deleteMany({ key: rlKey });
    return deletedCount > 0;
  }

  /** This process's state of the key in a window it enters, starting from a block claimed ahead if there is one. */
  async #newWindow(key: string, window: number, known: Local | undefined): Promise<Local> {
    this.#prune(window);
    const local: Local = {
      window,
      nextBlock: 0,
      left: 0,
      consumed: 0,
      reserve: undefined,
      claiming: undefined,
      ahead: undefined,
      jitter: this.#jitter(),
    };
    this.#local.set(key, local);
    if (known?.ahead?.window === window) {
      // Waiting here is rare: the claim was sent well before the window began.
      this.#inserts.hurry();
      local.claiming = known.ahead.claim.then(
        (held) => {
          if (held) {
            local.nextBlock = held.block + 1;
            local.reserve = held;
          }
        },
        () => undefined, // not claimed: the request claims the window's first block itself
      );
      await local.claiming;
      local.claiming = undefined;
    }
    return local;
  }

  /**
   * The key's state in the window it enters, made at once from the block it claimed ahead when the
   * database has already granted it, which is the usual case: the claim went out 2–30 % of a window
   * before. Otherwise undefined, for consume() to wait on the claim or claim for itself. Entering
   * synchronously matters at the turn: every active key's and address's first request of the window
   * would otherwise take consume()'s dozen promises, all at once, on the loop that serves the rest
   * (bench:validate's 612 keys and 612 addresses at 6,700 req/s: 1,224 such decisions within the
   * first tenth of a second).
   */
  #enterOnGranted(key: string, known: Local, window: number): Local | undefined {
    const ahead = known.ahead;
    if (ahead?.window !== window || !ahead.granted) return undefined;
    this.#prune(window);
    // The old state gives its claim up, so no slower path can spend the same block again.
    known.ahead = undefined;
    const local: Local = {
      window,
      nextBlock: ahead.granted.block + 1,
      left: 0,
      consumed: 0,
      reserve: { ...ahead.granted },
      claiming: undefined,
      ahead: undefined,
      jitter: this.#jitter(),
    };
    this.#local.set(key, local);
    return local;
  }

  /** Forgets keys idle since before the previous window, once per window, so memory follows the active keys. */
  #prune(window: number): void {
    if (this.#prunedWindow === window) return;
    this.#prunedWindow = window;
    for (const [key, local] of this.#local) if (local.window < window - 1) this.#local.delete(key);
  }

  #spend(local: Local, held: Held): void {
    local.left = held.left;
    // Requests before this block are counted as used (by whoever holds them).
    local.consumed = held.block * this.#block;
  }

  /**
   * Claims the next block while a third to two thirds of the current one is still unspent, and the
   * next window's first block in the last 30 % to 2 % of this one (where in those ranges is
   * the key's jitter), in the background; a failure there only means a later request claims for
   * itself (and reports the error if it fails again).
   */
  #claimAhead(key: string, local: Local, msDuration: number, msLeft: number): void {
    if (!local.reserve && !local.claiming && local.left <= this.#block * (1 / 3 + local.jitter / 3) && local.nextBlock < this.#blockCount) {
      this.#startClaim(key, local, msDuration, false).catch(() => undefined);
    }
    if (!local.ahead && msLeft <= msDuration * (0.02 + 0.28 * local.jitter)) {
      const window = local.window + 1;
      const ahead: Ahead = { window, claim: Promise.resolve(null), granted: undefined };
      ahead.claim = this.#insertBlock(key, window, 0, msDuration, false).then((inserted) => {
        if (!inserted) return null;
        ahead.granted = { block: 0, left: this.#block };
        return { block: 0, left: this.#block };
      });
      ahead.claim.catch(() => undefined);
      local.ahead = ahead;
    }
  }

  /** urgent: a request waits on it (see BlockInserts). */
  #startClaim(key: string, local: Local, msDuration: number, urgent: boolean): Promise<void> {
    const claim = this.#claim(key, local, msDuration, urgent).finally(() => {
      if (local.claiming === claim) local.claiming = undefined;
    });
    local.claiming = claim;
    return claim;
  }

  /** Claims the lowest free block of the window into the reserve, or learns that none is left. */
  async #claim(key: string, local: Local, msDuration: number, urgent: boolean): Promise<void> {
    while (local.nextBlock < this.#blockCount) {
      const k = local.nextBlock;
      local.nextBlock += 1;
      let inserted: boolean;
      try {
        inserted = await this.#insertBlock(key, local.window, k, msDuration, urgent);
      } catch (err) {
        if (local.nextBlock === k + 1) local.nextBlock = k; // not claimed: try it again next time
        throw err;
      }
      if (!inserted) continue;
      local.reserve = { block: k, left: Math.min(this.#block, this.points - k * this.#block) };
      return;
    }
  }

  /** True when this process now holds the block, false when another one does. */
  #insertBlock(key: string, window: number, block: number, msDuration: number, urgent: boolean): Promise<boolean> {
    const rlKey = this.getKey(key);
    const doc: BlockDoc = {
      _id: `${rlKey}#${window}#${block}`,
      key: rlKey,
      window,
      block,
      purgeAt: new Date((window + 2) * msDuration + this.#offset),
    };
    return this.#inserts.insert(doc, urgent);
  }
}
