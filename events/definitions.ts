import { ACCOUNT_EVENTS } from '../services/accounts/events.ts';
import type { EventDefinition } from './catalog.ts';

/**
 * The platform's event catalog: every event type, its topic, schema and aggregate key.
 * Bounded contexts add their definitions here as they land.
 */
export const TOPICS = {
  accounts: 'accounts.events',
  paymentWebhooks: 'payments.webhooks',
  subscriptions: 'subscriptions.events',
  keys: 'keys.events',
  usage: 'usage.events',
} as const;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const EVENT_DEFINITIONS: readonly EventDefinition<string, any>[] = [...ACCOUNT_EVENTS];
