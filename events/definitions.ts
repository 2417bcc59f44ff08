import { ACCOUNT_EVENTS } from '../services/accounts/events.ts';
import { BILLING_EVENTS } from '../services/billing/events.ts';
import { KEY_EVENTS } from '../services/keys/events.ts';
import { USAGE_EVENTS } from '../services/keys/usage.ts';
import type { AnyEventDefinition } from './catalog.ts';

/**
 * The platform's event catalog: every event type, its topic, schema and aggregate key.
 * Bounded contexts add their definitions here as they land.
 */
export const EVENT_DEFINITIONS: readonly AnyEventDefinition[] = [...ACCOUNT_EVENTS, ...BILLING_EVENTS, ...KEY_EVENTS, ...USAGE_EVENTS];
