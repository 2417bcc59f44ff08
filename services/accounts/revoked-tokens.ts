import type { Collection, Db, Document } from 'mongodb';
import type { EventCodec } from '../../events/codec.ts';
import { newEvent } from '../../events/envelope.ts';
import type { EventLog } from '../../events/event-log.ts';
import { Outbox } from '../../events/outbox.ts';
import type { EventPublisher } from '../../events/publisher.ts';
import type { AccountLoggedOut } from './events.ts';

export const REVOKED_TOKENS_COLLECTION = 'revoked_tokens';

interface RevokedToken extends Document {
  /** The token's jti: authenticate looks it up by `_id` equality, the one lookup FerretDB serves from an index. */
  _id: string;
  userId: string;
  /** The token's own expiry: past it the token is refused as expired, and the record can go. */
  expiresAt: Date;
}

/**
 * Tokens logged out one by one, each until its expiry. The record is also the single-document outbox
 * of its `account.logged-out` (scope this) event: the refusal holds from the insert, and the audit
 * log gets its entry even when Kafka is away (the relay publishes it then).
 *
 * Swept, not a TTL index: a TTL index would drop a record whose event is still unpublished, and
 * FerretDB 1.24 refuses TTL indexes anyway (code 238).
 */
export class RevokedTokens {
  readonly #collection: Collection<Document>;
  readonly #outbox: Outbox<RevokedToken>;

  constructor(db: Db, codec: EventCodec, publisher: EventPublisher, log: EventLog) {
    this.#collection = db.collection(REVOKED_TOKENS_COLLECTION);
    this.#outbox = new Outbox<RevokedToken>(this.#collection, codec, publisher, log);
  }

  get relayable(): Outbox<Document> {
    return this.#outbox;
  }

  async ensureIndexes(): Promise<void> {
    await this.#outbox.ensureIndexes();
    await this.#collection.createIndex({ expiresAt: 1 });
  }

  /**
   * Refuses the token from now on. Revoking one twice (two log-outs racing with the same token) is
   * the same as once: the second insert finds the first, and one event is recorded.
   */
  async revoke(token: { jti: string; userId: string; exp: number }, correlationId: string): Promise<void> {
    const event: AccountLoggedOut = newEvent('account.logged-out', { userId: token.userId, scope: 'this' }, { correlationId });
    try {
      await this.#outbox.claim({ _id: token.jti, userId: token.userId, expiresAt: new Date(token.exp * 1000) }, [event]);
    } catch (err) {
      if ((err as { code?: number }).code === DUPLICATE_KEY) return;
      throw err;
    }
  }

  async isRevoked(jti: string): Promise<boolean> {
    return (await this.#collection.findOne({ _id: jti as never }, { projection: { _id: 1 } })) !== null;
  }

  /** Drops records of tokens past their expiry whose event is published; returns how many. */
  async sweep(now = new Date()): Promise<number> {
    const { deletedCount } = await this.#collection.deleteMany({ expiresAt: { $lt: now }, 'outbox.pending': { $ne: true } });
    return deletedCount;
  }
}

const DUPLICATE_KEY = 11000;
