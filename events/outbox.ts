import { Binary, type Collection, type Document } from 'mongodb';
import type { EventLog } from './event-log.ts';
import type { EventCodec } from './codec.ts';
import type { Event, Position } from './envelope.ts';
import { errorMessage } from './errors.ts';
import type { EventPublisher, RawRecord } from './publisher.ts';

/**
 * Single-document outbox (docs/architecture.md): the claim that makes a synchronous check possible (a unique
 * key) and the events it must publish are written in one insert, so neither exists without the other.
 */
export interface OutboxState {
  pending: boolean;
  createdAt: Date;
  publishedAt?: Date;
  attempts: number;
  messages?: { topic: string; key: string; value: Binary; headers: Record<string, string> }[];
}

export type Claim<D extends Document> = D & { outbox: OutboxState };

/** Published with the log positions its events got, or pending for the relay. */
export type ClaimResult = { status: 'published'; positions: Position[] } | { status: 'pending' };

export class Outbox<D extends Document> {
  private readonly collection: Collection<Document>;
  private readonly codec: EventCodec;
  private readonly publisher: EventPublisher;
  private readonly log: EventLog;

  constructor(collection: Collection<Document>, codec: EventCodec, publisher: EventPublisher, log: EventLog) {
    this.collection = collection;
    this.codec = codec;
    this.publisher = publisher;
    this.log = log;
  }

  /**
   * Inserts the claim (throws the driver's duplicate-key error when it is taken), then publishes.
   * 'pending' means Kafka did not acknowledge: the claim stands and the relay will publish it.
   */
  async claim(document: D, events: readonly Event[]): Promise<ClaimResult> {
    const claim = { ...document, outbox: this.pendingState(events) };
    await this.collection.insertOne(claim);
    const positions = await this.publishClaim(claim);
    return positions ? { status: 'published', positions } : { status: 'pending' };
  }

  /**
   * The same for a change of an existing document: `set` and the events in one update, made only
   * while `guard` holds and no earlier claim of the document is still pending (its messages would
   * be overwritten). 'conflict' when either does not hold: nothing was written.
   */
  async claimChange(id: unknown, guard: Document, set: Document, events: readonly Event[]): Promise<ClaimResult | { status: 'conflict' }> {
    const outbox = this.pendingState(events);
    const { matchedCount } = await this.collection.updateOne(
      { ...guard, _id: id as never, 'outbox.pending': { $ne: true } },
      { $set: { ...set, outbox } },
    );
    if (matchedCount === 0) return { status: 'conflict' };
    const positions = await this.publishClaim({ _id: id, outbox });
    return positions ? { status: 'published', positions } : { status: 'pending' };
  }

  /** Publishes one claim now if it is still pending; null when Kafka did not acknowledge. */
  async publishPending(id: unknown): Promise<Position[] | null> {
    const claim = await this.collection.findOne({ _id: id as never, 'outbox.pending': true });
    return claim ? this.publishClaim(claim) : [];
  }

  /** Publishes every claim older than `graceMs` that is still pending; returns how many it published. */
  async relayOnce(graceMs: number, limit = 100): Promise<number> {
    const cutoff = new Date(Date.now() - graceMs);
    const stale = await this.collection
      .find({ 'outbox.pending': true, 'outbox.createdAt': { $lt: cutoff } })
      .sort({ 'outbox.createdAt': 1 })
      .limit(limit)
      .toArray();
    let published = 0;
    for (const claim of stale) if (await this.publishClaim(claim)) published++;
    return published;
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ 'outbox.pending': 1, 'outbox.createdAt': 1 });
  }

  private pendingState(events: readonly Event[]): OutboxState {
    const messages = events.map((e) => {
      const m = this.codec.encode(e);
      return { topic: m.topic, key: m.key, value: new Binary(m.value), headers: m.headers };
    });
    return { pending: true, createdAt: new Date(), attempts: 0, messages };
  }

  private async publishClaim(claim: Document): Promise<Position[] | null> {
    const outbox = claim.outbox as OutboxState;
    const records: RawRecord[] = (outbox.messages ?? []).map((m) => ({
      topic: m.topic,
      key: m.key,
      value: Buffer.from(m.value.buffer),
      headers: m.headers,
    }));
    let positions: Position[];
    try {
      positions = await this.publisher.publishRaw(records);
    } catch (err) {
      await this.collection.updateOne({ _id: claim._id }, { $inc: { 'outbox.attempts': 1 } }).catch(() => undefined);
      this.log.warn({ claim: String(claim._id), err: errorMessage(err) }, 'outbox publish failed; the relay will retry');
      return null;
    }
    // Consumers are idempotent by event id, so a crash before this update only costs a re-publish.
    await this.collection.updateOne(
      { _id: claim._id, 'outbox.pending': true },
      { $set: { 'outbox.pending': false, 'outbox.publishedAt': new Date() }, $unset: { 'outbox.messages': '' } },
    );
    return positions;
  }
}

/** Runs relayOnce on an interval until stopped. */
export class OutboxRelay {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  private readonly outboxes: readonly Outbox<Document>[];
  private readonly options: { intervalMs: number; graceMs: number; log: EventLog };

  constructor(outboxes: readonly Outbox<Document>[], options: { intervalMs: number; graceMs: number; log: EventLog }) {
    this.outboxes = outboxes;
    this.options = options;
  }

  start(): void {
    this.stopped = false;
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.tick().finally(() => this.schedule());
    }, this.options.intervalMs);
  }

  private async tick(): Promise<void> {
    for (const outbox of this.outboxes) {
      try {
        const n = await outbox.relayOnce(this.options.graceMs);
        if (n > 0) this.options.log.info({ published: n }, 'outbox relay published pending claims');
      } catch (err) {
        this.options.log.warn({ err: errorMessage(err) }, 'outbox relay pass failed');
      }
    }
  }
}
