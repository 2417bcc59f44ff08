import type { AnyEventDefinition } from '../../events/catalog.ts';
import type { Event } from '../../events/envelope.ts';

export const ACCOUNTS_TOPIC = 'accounts.events';

export interface AccountRegisteredData {
  userId: string;
  email: string;
  name: string;
}

export type AccountRegistered = Event<'account.registered', AccountRegisteredData>;

export const ACCOUNT_EVENTS: AnyEventDefinition[] = [
  { type: 'account.registered', topic: ACCOUNTS_TOPIC, schema: 'accounts/account.registered', key: (d: AccountRegisteredData) => d.userId },
];
