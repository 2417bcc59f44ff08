import { accountsContext } from '../services/accounts/context.ts';
import { auditContext } from '../services/audit/context.ts';
import { billingContext } from '../services/billing/context.ts';
import { consoleFace } from '../services/console/context.ts';
import { integrationContext } from '../services/integration/context.ts';
import { keysContext } from '../services/keys/context.ts';
import { mailerContext } from '../services/mailer/context.ts';
import { mcpContext } from '../services/mcp/context.ts';
import { ragContext } from '../services/rag/context.ts';
import { teamsContext } from '../services/teams/context.ts';
import { visionContext } from '../services/vision/context.ts';
import { visionRagFace } from '../services/vision-rag/context.ts';
import type { BoundedContext } from '../services/platform/context.ts';

/**
 * Every bounded context of the platform, in the order their services start: the one place a new
 * context registers (docs/architecture.md: Adding a bounded context). The vision-RAG face is listed like one: it has a
 * service but no events or projections of its own.
 */
export const CONTEXTS: readonly BoundedContext[] = [
  accountsContext,
  keysContext,
  auditContext,
  teamsContext,
  billingContext,
  mailerContext,
  ragContext,
  visionContext,
  integrationContext,
  visionRagFace,
  mcpContext,
  consoleFace,
];

/** The event catalog: every event type, its topic, schema and aggregate key. */
export const EVENT_DEFINITIONS = CONTEXTS.flatMap((c) => c.events);

/** Every service `svc run` knows, in start order. */
export const SERVICES = CONTEXTS.flatMap((c) => c.services);

/** Every projection `svc replay` can rebuild. */
export const PROJECTIONS = CONTEXTS.flatMap((c) => c.projections);
