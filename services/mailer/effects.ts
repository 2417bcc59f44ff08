import type { Collection, Db } from 'mongodb';

/**
 * Idempotency for side effects (DESIGN.md): an effect is claimed in a unique record before it
 * happens, so redelivery or a replay never repeats it. A claim whose owner died mid-effect can be
 * taken over after the lease; the effect then happens at most twice, never zero times.
 */
interface EffectRecord {
  _id: string;
  status: 'claimed' | 'done';
  claimedAt: Date;
  doneAt?: Date;
}

export class Effects {
  private readonly collection: Collection<EffectRecord>;
  private readonly leaseMs: number;

  constructor(db: Db, leaseMs = 5 * 60_000) {
    this.collection = db.collection<EffectRecord>('effects');
    this.leaseMs = leaseMs;
  }

  /** True when the caller now owns the effect and must perform it, then call done(). */
  async claim(id: string, now = new Date()): Promise<boolean> {
    try {
      await this.collection.insertOne({ _id: id, status: 'claimed', claimedAt: now });
      return true;
    } catch (err) {
      if ((err as { code?: number }).code !== 11000) throw err;
    }
    const taken = await this.collection.updateOne(
      { _id: id, status: 'claimed', claimedAt: { $lt: new Date(now.getTime() - this.leaseMs) } },
      { $set: { claimedAt: now } },
    );
    return taken.modifiedCount === 1;
  }

  async done(id: string): Promise<void> {
    await this.collection.updateOne({ _id: id }, { $set: { status: 'done', doneAt: new Date() } });
  }

  /** The effect failed before it happened: release it so the retry can claim it again. */
  async release(id: string): Promise<void> {
    await this.collection.deleteOne({ _id: id, status: 'claimed' });
  }
}
