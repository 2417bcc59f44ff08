import { createHash } from 'node:crypto';
import type { Collection, Db, Document } from 'mongodb';
import type { EventCodec } from '../../../events/codec.ts';
import { newEvent } from '../../../events/envelope.ts';
import type { EventLog } from '../../../events/event-log.ts';
import { Outbox } from '../../../events/outbox.ts';
import type { EventPublisher } from '../../../events/publisher.ts';
import type { AccountSsoLinked, AccountSsoUnlinked } from '../events.ts';

/**
 * The account store's record of provider identities: which account an OpenID Connect identity (the ID
 * token's `iss` and `sub`) opens. It is the only thing a single sign-on matches; an e-mail never is.
 *
 * One document per identity whose `_id` is the SHA-256 of (iss, sub): the insert against `_id` is the
 * one uniqueness MongoDB and FerretDB both enforce atomically (docs/architecture.md), so one identity
 * names one account, whoever races. The document and its `account.sso-linked` event are one insert
 * (the single-document outbox): a link the audit log does not know never exists.
 */

const COLLECTION = 'sso_identities';

export interface ProviderIdentity extends Document {
  /** SHA-256 (hex) of the issuer and subject, length-prefixed: see identityId. */
  _id: string;
  issuer: string;
  subject: string;
  userId: string;
  /** The team whose provider it is of: a sign-on through another team's configuration does not use it. */
  subscriptionId: string;
  /** made: single sign-on made the account with it; link: the account's owner linked it, logged in the ordinary way. */
  via: 'made' | 'link';
  linkedAt: Date;
  /** Its owner unlinked it (kept until its event is published, then free to be linked again). */
  unlinkedAt?: Date;
  outbox?: { pending: boolean; attempts: number };
}

export type ClaimResult = 'linked' | 'already' | 'taken';

/** The identity's document id: issuer and subject length-prefixed, so no pair spells another's bytes. */
export function identityId(issuer: string, subject: string): string {
  const hash = createHash('sha256');
  for (const part of [issuer, subject]) hash.update(`${Buffer.byteLength(part, 'utf8')}:${part}`);
  return hash.digest('hex');
}

export class ProviderIdentities {
  readonly #collection: Collection<Document>;
  /** The same collection, read as identities. */
  readonly #identities: Collection<ProviderIdentity>;
  readonly #outbox: Outbox<ProviderIdentity>;

  constructor(db: Db, codec: EventCodec, publisher: EventPublisher, log: EventLog) {
    this.#collection = db.collection(COLLECTION);
    this.#identities = db.collection<ProviderIdentity>(COLLECTION);
    this.#outbox = new Outbox<ProviderIdentity>(this.#collection, codec, publisher, log);
  }

  get relayable(): Outbox<Document> {
    return this.#outbox;
  }

  async ensureIndexes(): Promise<void> {
    await this.#collection.createIndex({ userId: 1 });
    await this.#outbox.ensureIndexes();
  }

  /**
   * Records the identity on the account with its event. 'already': this account has it (nothing
   * written); 'taken': another account has it (nothing written). A claim Kafka did not acknowledge
   * stands, and the relay publishes its event.
   */
  async claim(
    identity: Pick<ProviderIdentity, 'issuer' | 'subject' | 'userId' | 'subscriptionId' | 'via'>,
    correlationId: string,
  ): Promise<ClaimResult> {
    const event: AccountSsoLinked = newEvent('account.sso-linked', { ...identity }, { correlationId });
    const _id = identityId(identity.issuer, identity.subject);
    const document: ProviderIdentity = { _id, ...identity, linkedAt: event.metadata.occurredAt };
    for (let attempt = 0; attempt < 2; attempt += 1) {
      try {
        await this.#outbox.claim(document, [event]);
        return 'linked';
      } catch (err) {
        if ((err as { code?: number }).code !== 11000) throw err;
      }
      // An identity unlinked earlier, its event out: free again (the delete is guarded, so of two racing
      // claims one inserts and the other finds it taken).
      await this.#collection.deleteOne({ _id: _id as never, unlinkedAt: { $exists: true }, 'outbox.pending': { $ne: true } });
    }
    const holder = await this.find(identity.issuer, identity.subject);
    return holder?.userId === identity.userId ? 'already' : 'taken';
  }

  async find(issuer: string, subject: string): Promise<ProviderIdentity | null> {
    return this.#identities.findOne({ _id: identityId(issuer, subject), unlinkedAt: { $exists: false } });
  }

  /** The identities recorded on an account (a handful at most: one per team it linked). */
  async ofAccount(userId: string): Promise<ProviderIdentity[]> {
    return this.#identities
      .find({ userId, unlinkedAt: { $exists: false } })
      .limit(50)
      .toArray();
  }

  /**
   * Marks a linked identity of this account unlinked, with its account.sso-unlinked event. 'none' when the
   * account has no such identity, or when it is the one single sign-on made the account with (its
   * only way in: the account has no password anyone knows); 'busy' when the identity changed meanwhile
   * or its link's event is still being published (retry).
   */
  async unlink(userId: string, id: string, correlationId: string): Promise<'unlinked' | 'none' | 'busy'> {
    const found = await this.#identities.findOne({ _id: id, userId, via: 'link', unlinkedAt: { $exists: false } });
    if (!found) return 'none';
    const event: AccountSsoUnlinked = newEvent(
      'account.sso-unlinked',
      { userId, subscriptionId: found.subscriptionId, issuer: found.issuer },
      { correlationId },
    );
    // The mark and its event in one write, guarded: of two unlinks, one is recorded.
    const result = await this.#outbox.claimChange(
      id,
      { userId, via: 'link', unlinkedAt: { $exists: false } },
      { unlinkedAt: event.metadata.occurredAt },
      [event],
    );
    return result.status === 'conflict' ? 'busy' : 'unlinked';
  }
}
