import { defineEvent, type EventDefinition } from '../../events/catalog.ts';
import type { Event } from '../../events/envelope.ts';

export const ACCOUNTS_TOPIC = 'accounts.events';

export interface AccountRegisteredData {
  userId: string;
  email: string;
  name: string;
}

export type AccountRegistered = Event<'account.registered', AccountRegisteredData>;

export interface AccountPasswordChangedData {
  userId: string;
  tokenVersion: number;
}

export type AccountPasswordChanged = Event<'account.password-changed', AccountPasswordChangedData>;

export interface AccountLoggedInData {
  userId: string;
  method: 'password' | 'sso';
  /** sso: the team (subscription) whose provider the account signed in through; null for a password (schema v2). */
  subscriptionId: string | null;
}

/** A session was issued: the audit log's "every login". Who and how, nothing of the credentials. */
export type AccountLoggedIn = Event<'account.logged-in', AccountLoggedInData>;

export interface AccountLoggedOutData {
  userId: string;
  /** this: the one token that asked; all: every token the account had. */
  scope: 'this' | 'all';
}

/** A session was ended before its expiry (log-out, log out everywhere). Who and which, never the token. */
export type AccountLoggedOut = Event<'account.logged-out', AccountLoggedOutData>;

/** Every event the accounts context publishes. */
export type AccountEvent = AccountRegistered | AccountPasswordChanged | AccountLoggedIn | AccountLoggedOut;

export const ACCOUNT_EVENTS: readonly EventDefinition[] = [
  defineEvent<AccountRegistered>({
    type: 'account.registered',
    topic: ACCOUNTS_TOPIC,
    schema: 'accounts/account.registered',
    key: (d) => d.userId,
  }),
  defineEvent<AccountPasswordChanged>({
    type: 'account.password-changed',
    topic: ACCOUNTS_TOPIC,
    schema: 'accounts/account.password-changed',
    key: (d) => d.userId,
  }),
  defineEvent<AccountLoggedIn>({
    type: 'account.logged-in',
    topic: ACCOUNTS_TOPIC,
    schema: 'accounts/account.logged-in',
    key: (d) => d.userId,
  }),
  defineEvent<AccountLoggedOut>({
    type: 'account.logged-out',
    topic: ACCOUNTS_TOPIC,
    schema: 'accounts/account.logged-out',
    key: (d) => d.userId,
  }),
];
