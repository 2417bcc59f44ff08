import { defineEvent, type EventDefinition } from '../../events/catalog.ts';
import type { Event } from '../../events/envelope.ts';

export const ACCOUNTS_TOPIC = 'accounts.events';

export interface AccountRegisteredData {
  userId: string;
  email: string;
  name: string;
}

export type AccountRegistered = Event<'account.registered', AccountRegisteredData>;

/** Every event the accounts context publishes. */
export type AccountEvent = AccountRegistered;

export const ACCOUNT_EVENTS: readonly EventDefinition[] = [
  defineEvent<AccountRegistered>({ type: 'account.registered', topic: ACCOUNTS_TOPIC, schema: 'accounts/account.registered', key: (d) => d.userId }),
];
