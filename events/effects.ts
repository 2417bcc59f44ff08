import { randomUUID } from 'node:crypto';
import type { Collection, Db, Document } from 'mongodb';
import { TransientError } from './errors.ts';

/**
 * Idempotency for side effects (docs/architecture.md): an effect (a message sent, something issued) is
 * claimed in a record with a unique `_id` before it happens, so redelivery or a replay never
 * repeats it.
 *
 * A claim is held by an owner (a process) for a lease. The partition's consumer meets a claim that
 * is not done only when an earlier owner stopped mid-effect: a crash, or a rebalance while it was
 * still working. It then waits (EffectBusy, a transient error: the runner retries and never commits
 * past the event) until the owner marks it done or the lease runs out, and takes it over. So an
 * effect claimed by a process that died is finished after the restart, never lost; it can happen
 * twice only if the owner died between performing it and recording it (an effect that can be
 * repeated should carry a deterministic id, so its receiver can drop the second copy).
 *
 * Uniqueness rests on `_id` inserts alone, the one write MongoDB and FerretDB both make atomic.
 */
export interface EffectRecord<S = Document> {
  _id: string;
  status: 'claimed' | 'done' | 'failed';
  owner: string;
  claimedAt: Date;
  leaseUntil: Date;
  attempts: number;
  /**
   * The owners that held the claim before the current one, oldest first: each takeover adds the one it
   * replaced. What an audit reads to tell a repeat after a crash (the dead owner's own in-flight effect)
   * from any other.
   */
  previousOwners?: string[];
  /** What the owner decided before performing the effect (e.g. the event to publish): a takeover repeats it. */
  saved?: S;
  doneAt?: Date;
  /** Why a permanent failure gave up (never a secret). */
  error?: string;
}

export type EffectClaim<S> =
  | {
      outcome: 'owned';
      saved: S | undefined;
      attempts: number;
      /** This process performed it already and only failed to record that (the database was down): record, do not repeat. */
      performed: boolean;
    }
  | { outcome: 'done' };

/** Another owner is inside its lease: wait, do not skip, do not commit past it. */
export class EffectBusy extends TransientError {
  readonly until: Date;
  constructor(id: string, until: Date) {
    super(`effect ${id} is being performed by another process until ${until.toISOString()}`);
    this.name = 'EffectBusy';
    this.until = until;
  }
}

export interface EffectsOptions {
  /** This process's identity as an owner; default a fresh id per Effects instance. */
  owner?: string;
  /** How long a claim keeps others out; well above the effect's own timeout. Default 30 s. */
  leaseMs?: number;
  collection?: string;
  now?: () => Date;
}

export class Effects<S extends Document = Document> {
  readonly owner: string;
  readonly #collection: Collection<EffectRecord<S>>;
  readonly #leaseMs: number;
  readonly #now: () => Date;
  /** Effects this process performed but has not recorded done yet. */
  readonly #performed = new Set<string>();

  constructor(db: Db, options: EffectsOptions = {}) {
    this.owner = options.owner ?? randomUUID();
    this.#collection = db.collection<EffectRecord<S>>(options.collection ?? 'effects');
    this.#leaseMs = options.leaseMs ?? 30_000;
    this.#now = options.now ?? (() => new Date());
  }

  /**
   * Claims the effect: 'owned' means perform it (then done()), 'done' means it happened already.
   * Throws EffectBusy while another owner's lease runs. `saving` is stored with a fresh claim (as
   * save() would) and returned as `saved`; taking over an earlier claim returns what that one saved.
   */
  async claim(id: string, saving?: S): Promise<EffectClaim<S>> {
    const now = this.#now();
    const fresh: EffectRecord<S> = {
      _id: id,
      status: 'claimed',
      owner: this.owner,
      claimedAt: now,
      leaseUntil: this.#leaseEnd(now),
      attempts: 1,
    };
    // What the caller would save() right after claiming, written with the claim itself: one write fewer.
    if (saving !== undefined) fresh.saved = saving;
    try {
      await this.#collection.insertOne(fresh as never);
      return { outcome: 'owned', saved: saving, attempts: 1, performed: false };
    } catch (err) {
      if ((err as { code?: number }).code !== 11000) throw err;
    }
    const existing = await this.#collection.findOne({ _id: id } as never);
    if (!existing) return this.claim(id, saving); // removed meanwhile
    if (existing.status === 'done') {
      this.#performed.delete(id);
      return { outcome: 'done' };
    }
    const mine = existing.owner === this.owner;
    const expired = existing.leaseUntil.getTime() <= now.getTime();
    // A failed effect is taken again when its event comes back: that is a re-drive after a fix.
    if (existing.status === 'claimed' && !mine && !expired) throw new EffectBusy(id, existing.leaseUntil);
    const attempts = existing.attempts + 1;
    const taken = await this.#collection.updateOne(
      { _id: id, owner: existing.owner, attempts: existing.attempts } as never,
      {
        $set: { status: 'claimed', owner: this.owner, claimedAt: now, leaseUntil: this.#leaseEnd(now), attempts },
        $unset: { error: '' },
        ...(mine ? {} : { $push: { previousOwners: existing.owner } }),
      } as never,
    );
    if (taken.matchedCount !== 1) return this.claim(id, saving);
    return { outcome: 'owned', saved: existing.saved, attempts, performed: mine && this.#performed.has(id) };
  }

  /**
   * The effect happened (the receiver took it). Remembered in memory until done() is
   * recorded, so that if recording fails (a database outage) the retry records it instead of
   * performing it a second time.
   */
  performed(id: string): void {
    this.#performed.add(id);
  }

  /** Records what is about to be done, so a takeover after a crash does the same thing, not a new one. */
  async save(id: string, saved: S): Promise<void> {
    await this.#collection.updateOne({ _id: id, owner: this.owner } as never, { $set: { saved } } as never);
  }

  /** Keeps others out while a long effect runs. */
  async renew(id: string): Promise<void> {
    await this.#collection.updateOne(
      { _id: id, owner: this.owner, status: 'claimed' } as never,
      { $set: { leaseUntil: this.#leaseEnd(this.#now()) } } as never,
    );
  }

  async done(id: string): Promise<void> {
    await this.#collection.updateOne(
      { _id: id } as never,
      { $set: { status: 'done', doneAt: this.#now() }, $unset: { saved: '' } } as never,
    );
    this.#performed.delete(id);
  }

  /** The effect failed before it happened and may be retried at once, by us or a new owner. */
  async release(id: string): Promise<void> {
    await this.#collection.updateOne(
      { _id: id, owner: this.owner, status: 'claimed' } as never,
      { $set: { leaseUntil: new Date(0) } } as never,
    );
  }

  /** It can never succeed as it is: recorded with the reason; a re-drive of its event tries again. */
  async fail(id: string, reason: string): Promise<void> {
    await this.#collection.updateOne(
      { _id: id, owner: this.owner } as never,
      { $set: { status: 'failed', error: reason.slice(0, 500), leaseUntil: new Date(0) } } as never,
    );
  }

  async get(id: string): Promise<EffectRecord<S> | null> {
    return this.#collection.findOne({ _id: id } as never) as Promise<EffectRecord<S> | null>;
  }

  #leaseEnd(now: Date): Date {
    return new Date(now.getTime() + this.#leaseMs);
  }
}
