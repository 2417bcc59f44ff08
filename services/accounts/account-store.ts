import { randomUUID } from 'node:crypto';
import type { Collection, Db, Document } from 'mongodb';
import type { EventCodec } from '../../events/codec.ts';
import { newEvent } from '../../events/envelope.ts';
import { Outbox } from '../../events/outbox.ts';
import type { EventPublisher } from '../../events/publisher.ts';
import type { Logger } from '../platform/logger.ts';
import type { StoredVerification, IssuedVerification } from './email-verification.ts';
import type {
  AccountEmailVerified,
  AccountLoggedOut,
  AccountPasswordChanged,
  AccountRegistered,
  AccountVerificationRequested,
} from './events.ts';
import { RevokedTokens } from './revoked-tokens.ts';

/**
 * The account service's own write store: one document per account, holding the password hash
 * (which never enters the log) and, through the outbox, the registration event.
 *
 * The document's `_id` is the normalised e-mail: an insert against `_id` is the one uniqueness
 * MongoDB and FerretDB both enforce atomically (docs/architecture.md), so no secondary unique index is
 * trusted with it.
 */
export interface AccountRecord extends Document {
  /** The normalised e-mail. */
  _id: string;
  userId: string;
  email: string;
  name: string;
  passwordHash: string;
  createdAt: Date;
  /** Moved on with each password change, in the same write as the hash; absent: 0. */
  tokenVersion?: number;
  passwordChangedAt?: Date;
  /** Failed publishes are counted in attempts; a claim still being published has none. */
  outbox?: { pending: boolean; attempts: number };
  /**
   * Made by a single sign-on through this team's provider (services/accounts/sso): its password hash is
   * of a random secret nobody ever saw, and that team's provider may sign it in again, as the identity
   * (iss, sub) it was made for (absent on accounts made before identities were recorded: the first
   * sign-on through that team records one, sso-login.ts).
   */
  sso?: { subscriptionId: string; issuer?: string; subject?: string };
  /** When its owner confirmed the address (account.email-verified); absent: not verified, so no e-mail match counts for it. */
  emailVerifiedAt?: Date;
  /** The address's current verification link, hashed (email-verification.ts); null once used. */
  verification?: StoredVerification | null;
}

type Position = { topic: string; partition: number; offset: string };

/** 'verified': done now (the event published); 'pending': done, its event waits for Kafka; 'conflict': nothing written. */
export type VerificationResult =
  | { status: 'verified'; event: AccountEmailVerified; position: Position | undefined }
  | { status: 'pending' }
  | { status: 'conflict' }
  | { status: 'used' };

export type RegisterResult =
  | { status: 'registered'; event: AccountRegistered; position: { topic: string; partition: number; offset: string } | undefined }
  | { status: 'taken' }
  | { status: 'unavailable' };

/**
 * 'pending': the change holds (the new hash and version are stored) and the relay publishes its
 * event once Kafka is back. 'conflict': the account changed since it was read, or its sign-up is
 * still being published; nothing was written.
 */
export type PasswordChangeResult =
  | {
      status: 'changed';
      tokenVersion: number;
      event: AccountPasswordChanged;
      position: { topic: string; partition: number; offset: string } | undefined;
    }
  | { status: 'pending'; tokenVersion: number }
  | { status: 'conflict' };

/**
 * Log out everywhere: 'done' once the account's version is past the one checked (by this call, or
 * by a change that raced it); 'pending' as for a password change; 'conflict' when an earlier claim
 * of the account is still unpublished, nothing written.
 */
export type LogOutEverywhereResult = { status: 'done' | 'pending'; tokenVersion: number } | { status: 'conflict' };

export const tokenVersionOf = (account: Pick<AccountRecord, 'tokenVersion'>): number => account.tokenVersion ?? 0;

export class AccountStore {
  private readonly collection: Collection<Document>;
  private readonly outbox: Outbox<AccountRecord>;
  /**
   * Verification links taken by a confirmation, one document per link hash. The guarded update below
   * is not atomic on FerretDB (two concurrent updates can both match), an insert on `_id` is: the
   * insert decides which confirmation uses the link.
   */
  private readonly usedLinks: Collection<{ _id: string; userId: string; at: Date }>;
  /** Tokens logged out one by one; checked by every authenticate() with this store. */
  readonly revocations: RevokedTokens;

  constructor(db: Db, codec: EventCodec, publisher: EventPublisher, log: Logger) {
    this.collection = db.collection('accounts');
    this.outbox = new Outbox<AccountRecord>(this.collection, codec, publisher, log);
    this.usedLinks = db.collection('used_verification_links');
    this.revocations = new RevokedTokens(db, codec, publisher, log);
  }

  get relayable(): Outbox<Document> {
    return this.outbox;
  }

  async ensureIndexes(): Promise<void> {
    // Lookups by user id (/auth/me before the projection has the account); ids are random UUIDs.
    await this.collection.createIndex({ userId: 1 });
    await this.outbox.ensureIndexes();
  }

  /**
   * `emailVerified` is always false: no way of signing up proves the address, single sign-on
   * included (a team's provider vouches for addresses at a domain the team claimed, and the owner
   * runs that provider: docs/security-and-tenancy.md). The welcome e-mail carries `verification`'s link.
   */
  async register(
    input: {
      email: string;
      name: string;
      passwordHash: string;
      sso?: { subscriptionId: string; issuer: string; subject: string };
      emailVerified: false;
      verification: IssuedVerification;
    },
    correlationId: string,
  ): Promise<RegisterResult> {
    const userId = randomUUID();
    const event: AccountRegistered = newEvent(
      'account.registered',
      { userId, email: input.email, name: input.name, verification: input.verification.link },
      { correlationId },
    );
    const record: AccountRecord = {
      _id: input.email,
      userId,
      email: input.email,
      name: input.name,
      passwordHash: input.passwordHash,
      createdAt: event.metadata.occurredAt,
      ...(input.sso ? { sso: input.sso } : {}),
      verification: input.verification.stored,
    };
    let result;
    try {
      result = await this.outbox.claim(record, [event]);
    } catch (err) {
      if ((err as { code?: number }).code === 11000) return { status: 'taken' };
      throw err;
    }
    // Kafka did not acknowledge: the claim stays and the relay publishes it once Kafka is back;
    // the caller is told to retry, and a retry with the same password completes it (retryPending).
    if (result.status === 'pending') return { status: 'unavailable' };
    return { status: 'registered', event, position: result.positions.length === 1 ? result.positions[0] : undefined };
  }

  /**
   * The new hash, the next token version and the account.password-changed event in one write
   * (the single-document outbox, like sign-up's), guarded on the hash that was checked: two
   * concurrent changes cannot both win.
   */
  async changePassword(account: AccountRecord, passwordHash: string, correlationId: string): Promise<PasswordChangeResult> {
    const tokenVersion = tokenVersionOf(account) + 1;
    const event: AccountPasswordChanged = newEvent('account.password-changed', { userId: account.userId, tokenVersion }, { correlationId });
    const result = await this.outbox.claimChange(
      account._id,
      { passwordHash: account.passwordHash },
      { passwordHash, tokenVersion, passwordChangedAt: event.metadata.occurredAt },
      [event],
    );
    if (result.status === 'conflict') return result;
    if (result.status === 'pending') return { status: 'pending', tokenVersion };
    return { status: 'changed', tokenVersion, event, position: result.positions.length === 1 ? result.positions[0] : undefined };
  }

  /**
   * Every token of the account refused: the next token version and account.logged-out (scope all)
   * in one write, guarded on the version that was checked (as a password change is on the hash).
   */
  async logOutEverywhere(account: AccountRecord, correlationId: string): Promise<LogOutEverywhereResult> {
    const tokenVersion = tokenVersionOf(account) + 1;
    const event: AccountLoggedOut = newEvent('account.logged-out', { userId: account.userId, scope: 'all' }, { correlationId });
    // `null` matches a document without the field: an account whose version was never moved.
    const guard = { tokenVersion: account.tokenVersion ?? null };
    const result = await this.outbox.claimChange(account._id, guard, { tokenVersion, loggedOutAt: event.metadata.occurredAt }, [event]);
    if (result.status !== 'conflict') return { status: result.status === 'pending' ? 'pending' : 'done', tokenVersion };
    const now = await this.findByEmail(account._id);
    if (now && tokenVersionOf(now) > tokenVersionOf(account)) return { status: 'done', tokenVersion: tokenVersionOf(now) };
    return { status: 'conflict' };
  }

  /** Whether a token was logged out on its own (its jti); see RevokedTokens. */
  isRevoked(jti: string): Promise<boolean> {
    return this.revocations.isRevoked(jti);
  }

  /**
   * A new verification link replaces the account's current one, with account.verification-requested
   * (its secret sealed for the mailer) in the same write. 'conflict': the account is verified, or an
   * earlier claim of it is still being published; nothing written.
   */
  async requestVerification(
    account: AccountRecord,
    issued: IssuedVerification,
    correlationId: string,
  ): Promise<'requested' | 'pending' | 'conflict'> {
    const event: AccountVerificationRequested = newEvent(
      'account.verification-requested',
      { userId: account.userId, email: account.email, name: account.name, ...issued.link },
      { correlationId },
    );
    // `null` matches an account without the field: one never verified.
    const result = await this.outbox.claimChange(account._id, { emailVerifiedAt: null }, { verification: issued.stored }, [event]);
    return result.status === 'published' ? 'requested' : result.status;
  }

  /**
   * The address verified, with account.email-verified in the same write, guarded on the link that
   * was checked: of two confirmations with one link (or a resend racing it) only one writes, so a
   * link is used once.
   */
  async confirmVerification(account: AccountRecord, tokenHash: string, correlationId: string): Promise<VerificationResult> {
    const event: AccountEmailVerified = newEvent(
      'account.email-verified',
      { userId: account.userId, email: account.email },
      { correlationId },
    );
    try {
      await this.usedLinks.insertOne({ _id: tokenHash, userId: account.userId, at: event.metadata.occurredAt });
    } catch (err) {
      if ((err as { code?: number }).code === 11000) return { status: 'used' };
      throw err;
    }
    const result = await this.outbox.claimChange(
      account._id,
      { 'verification.tokenHash': tokenHash, emailVerifiedAt: null },
      { emailVerifiedAt: event.metadata.occurredAt, verification: null },
      [event],
    );
    // Nothing written (an earlier claim of the account is still unpublished, or a resend replaced the
    // link): the link is not used up by this call, so a retry of a still-current link can verify.
    if (result.status === 'conflict') await this.usedLinks.deleteOne({ _id: tokenHash, userId: account.userId });
    if (result.status !== 'published') return { status: result.status };
    return { status: 'verified', event, position: result.positions[0] };
  }

  /** Publishes a registration whose first publish failed; true once Kafka has it. */
  async retryPending(record: AccountRecord): Promise<boolean> {
    return (await this.outbox.publishPending(record._id)) !== null;
  }

  async findById(userId: string): Promise<AccountRecord | null> {
    return (await this.collection.findOne({ userId })) as AccountRecord | null;
  }

  async findByEmail(email: string): Promise<AccountRecord | null> {
    return (await this.collection.findOne({ _id: email as never })) as AccountRecord | null;
  }
}
