import { accountsContext } from '../accounts/context.ts';
import { billingContext } from '../billing/context.ts';
import { integrationContext } from '../integration/context.ts';
import { keysContext } from '../keys/context.ts';
import { mailerContext } from '../mailer/context.ts';
import { mcpContext } from '../mcp/context.ts';
import { ragContext } from '../rag/context.ts';
import { visionContext } from '../vision/context.ts';
import type { BoundedContext } from './context.ts';

/**
 * Every bounded context of the platform, in the order their services start: the one place a new
 * context registers (README: adding a context).
 */
export const CONTEXTS: readonly BoundedContext[] = [accountsContext, keysContext, billingContext, mailerContext, ragContext, visionContext, integrationContext, mcpContext];

/** The event catalog: every event type, its topic, schema and aggregate key. */
export const EVENT_DEFINITIONS = CONTEXTS.flatMap((c) => c.events);

/** Every service `svc run` knows, in start order. */
export const SERVICES = CONTEXTS.flatMap((c) => c.services);

/** Every projection `svc replay` can rebuild. */
export const PROJECTIONS = CONTEXTS.flatMap((c) => c.projections);
