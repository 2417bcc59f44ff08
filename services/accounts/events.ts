import { defineEvent, type EventDefinition } from '../../events/catalog.ts';
import type { Event } from '../../events/envelope.ts';

export const ACCOUNTS_TOPIC = 'accounts.events';

/** The sealed secret of an address's verification link, for the mailer (email-verification.ts). */
export interface EmailVerificationLink {
  requestId: string;
  encryptedToken: string;
  expiresAt: Date;
}

export interface AccountRegisteredData {
  userId: string;
  email: string;
  name: string;
  /** The link the welcome e-mail carries (schema v2); null: none (before verification existed, or already proven). */
  verification?: EmailVerificationLink | null;
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

export interface AccountSsoLinkedData {
  userId: string;
  /** The team whose provider the identity is of. */
  subscriptionId: string;
  issuer: string;
  subject: string;
  /** made: single sign-on made the account with it; link: its owner linked it, logged in the ordinary way. */
  via: 'made' | 'link';
}

/** A provider identity (iss, sub) was recorded on an account: the only thing a later sign-on matches. */
export type AccountSsoLinked = Event<'account.sso-linked', AccountSsoLinkedData>;

export interface AccountSsoUnlinkedData {
  userId: string;
  subscriptionId: string;
  issuer: string;
}

/** The account's owner removed a provider identity it had linked. */
export type AccountSsoUnlinked = Event<'account.sso-unlinked', AccountSsoUnlinkedData>;

/** A new verification link for the account's address (POST /auth/verify/resend); the earlier one stops working. */
export type AccountVerificationRequested = Event<
  'account.verification-requested',
  { userId: string; email: string; name: string } & EmailVerificationLink
>;

/** The account proved its address (its signed-in owner confirmed the mailed link): e-mail matches count from now on. */
export type AccountEmailVerified = Event<'account.email-verified', { userId: string; email: string }>;

export interface AccountAssistantConnectedData {
  userId: string;
  grantId: string;
  clientId: string;
  clientName: string;
  scopes: string[];
  tier: string;
  keyLast4: string;
}

/** An assistant (an OAuth client) was connected to the account's MCP access at consent. */
export type AccountAssistantConnected = Event<'account.assistant-connected', AccountAssistantConnectedData>;

export interface AccountAssistantDisconnectedData {
  userId: string;
  grantId: string;
  clientId: string;
  clientName: string;
  by: 'customer' | 'provider';
}

/** An assistant's grant ended: by its customer in the console, or by the authorization server. */
export type AccountAssistantDisconnected = Event<'account.assistant-disconnected', AccountAssistantDisconnectedData>;

/** Every event the accounts context publishes. */
export type AccountEvent =
  | AccountVerificationRequested
  | AccountEmailVerified
  | AccountRegistered
  | AccountPasswordChanged
  | AccountLoggedIn
  | AccountLoggedOut
  | AccountSsoLinked
  | AccountSsoUnlinked
  | AccountAssistantConnected
  | AccountAssistantDisconnected;

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
  defineEvent<AccountVerificationRequested>({
    type: 'account.verification-requested',
    topic: ACCOUNTS_TOPIC,
    schema: 'accounts/account.verification-requested',
    key: (d) => d.userId,
  }),
  defineEvent<AccountEmailVerified>({
    type: 'account.email-verified',
    topic: ACCOUNTS_TOPIC,
    schema: 'accounts/account.email-verified',
    key: (d) => d.userId,
  }),
  defineEvent<AccountLoggedOut>({
    type: 'account.logged-out',
    topic: ACCOUNTS_TOPIC,
    schema: 'accounts/account.logged-out',
    key: (d) => d.userId,
  }),
  defineEvent<AccountSsoLinked>({
    type: 'account.sso-linked',
    topic: ACCOUNTS_TOPIC,
    schema: 'accounts/account.sso-linked',
    key: (d) => d.userId,
  }),
  defineEvent<AccountSsoUnlinked>({
    type: 'account.sso-unlinked',
    topic: ACCOUNTS_TOPIC,
    schema: 'accounts/account.sso-unlinked',
    key: (d) => d.userId,
  }),
  defineEvent<AccountAssistantConnected>({
    type: 'account.assistant-connected',
    topic: ACCOUNTS_TOPIC,
    schema: 'accounts/account.assistant-connected',
    key: (d) => d.userId,
  }),
  defineEvent<AccountAssistantDisconnected>({
    type: 'account.assistant-disconnected',
    topic: ACCOUNTS_TOPIC,
    schema: 'accounts/account.assistant-disconnected',
    key: (d) => d.userId,
  }),
];
