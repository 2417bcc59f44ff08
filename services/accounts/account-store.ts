import { randomUUID } from 'node:crypto';
import type { Collection, Db, Document } from 'mongodb';
import type { EventCodec } from '../../events/codec.ts';
import { newEvent } from '../../events/envelope.ts';
import { Outbox } from '../../events/outbox.ts';
import type { EventPublisher } from '../../events/publisher.ts';
import type { Logger } from '../platform/logger.ts';
import type { AccountRegistered } from './events.ts';

/**
 * The account service's own write store: one document per account, unique on e-mail, holding the
 * password hash (which never enters the log) and, through the outbox, the registration event.
 */
export interface AccountRecord extends Document {
  _id: string;
  email: string;
  name: string;
  passwordHash: string;
  createdAt: Date;
}

export type RegisterResult =
  | { status: 'registered'; event: AccountRegistered; position: { topic: string; partition: number; offset: string } | undefined }
  | { status: 'taken' }
  | { status: 'unavailable' };

export class AccountStore {
  private readonly collection: Collection<Document>;
  private readonly outbox: Outbox<AccountRecord>;

  constructor(db: Db, codec: EventCodec, publisher: EventPublisher, log: Logger) {
    this.collection = db.collection('accounts');
    this.outbox = new Outbox<AccountRecord>(this.collection, codec, publisher, log);
  }

  get relayable(): Outbox<Document> {
    return this.outbox as unknown as Outbox<Document>;
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ email: 1 }, { unique: true });
    await this.outbox.ensureIndexes();
  }

  async register(input: { email: string; name: string; passwordHash: string }, correlationId: string): Promise<RegisterResult> {
    const userId = randomUUID();
    const event: AccountRegistered = newEvent('account.registered', { userId, email: input.email, name: input.name }, { correlationId });
    const record: AccountRecord = { _id: userId, email: input.email, name: input.name, passwordHash: input.passwordHash, createdAt: event.metadata.occurredAt };
    let result;
    try {
      result = await this.outbox.claim(record, [event]);
    } catch (err) {
      if ((err as { code?: number }).code === 11000) return { status: 'taken' };
      throw err;
    }
    if (result.status === 'pending') {
      // Kafka did not acknowledge: take the claim back so a retry can sign up again. Only a claim
      // still pending is removed; had the relay published it meanwhile, the account stands.
      const removed = await this.collection.deleteOne({ _id: userId as never, 'outbox.pending': true });
      return removed.deletedCount === 1 ? { status: 'unavailable' } : { status: 'registered', event, position: undefined };
    }
    return { status: 'registered', event, position: result.positions.length === 1 ? result.positions[0] : undefined };
  }

  async findByEmail(email: string): Promise<AccountRecord | null> {
    return (await this.collection.findOne({ email })) as AccountRecord | null;
  }
}
