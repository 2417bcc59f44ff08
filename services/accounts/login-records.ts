import type { Db, Document } from 'mongodb';
import type { EventCodec } from '../../events/codec.ts';
import { newEvent } from '../../events/envelope.ts';
import type { EventLog } from '../../events/event-log.ts';
import { Outbox } from '../../events/outbox.ts';
import type { EventPublisher } from '../../events/publisher.ts';
import type { AccountLoggedIn } from './events.ts';

const LOGINS_COLLECTION = 'account_logins';

/** How long a published login's claim is kept: long enough for the relay, then it is only the log's. */
const KEEP_MS = 7 * 24 * 3600 * 1000;

/**
 * Each login as an `account.logged-in` event, through a single-document outbox of its own (one
 * claim per login): a login Kafka does not acknowledge still gets its event, from the relay, so the
 * audit log's "every login" holds through an outage without making log-in wait for Kafka's return.
 */
export class LoginRecords {
  readonly #outbox: Outbox<Document>;
  readonly #db: Db;

  constructor(db: Db, codec: EventCodec, publisher: EventPublisher, log: EventLog) {
    this.#db = db;
    this.#outbox = new Outbox<Document>(db.collection(LOGINS_COLLECTION), codec, publisher, log);
  }

  get relayable(): Outbox<Document> {
    return this.#outbox;
  }

  async ensureIndexes(): Promise<void> {
    await this.#outbox.ensureIndexes();
    await this.#db.collection(LOGINS_COLLECTION).createIndex({ at: 1 });
  }

  /** A password log-in, or (with the team it came through) a single sign-on. */
  async record(userId: string, correlationId: string, sso: { subscriptionId: string } | null = null): Promise<void> {
    const data: AccountLoggedIn['data'] = sso
      ? { userId, method: 'sso', subscriptionId: sso.subscriptionId }
      : { userId, method: 'password', subscriptionId: null };
    const event: AccountLoggedIn = newEvent('account.logged-in', data, { correlationId });
    await this.#outbox.claim({ _id: event.metadata.eventId, userId, at: event.metadata.occurredAt }, [event]);
  }

  /** Drops published claims older than a week (FerretDB has no TTL index); pending ones stay for the relay. */
  async sweep(now = Date.now()): Promise<void> {
    await this.#db.collection(LOGINS_COLLECTION).deleteMany({ at: { $lt: new Date(now - KEEP_MS) }, 'outbox.pending': { $ne: true } });
  }
}
