import { SERVICES } from '../../../app/registry.ts';
import { CONFIG_VARIABLES, loadConfig } from '../../../services/platform/config.ts';
import type { ProjectFacts } from './manifest-rules.ts';

/**
 * Issue 25 lands in parts: the deploy files already describe the shared index (another change
 * adds `svc run indexer` and RAG_RUN_INDEXER to the code). Only these exact names are excused;
 * remove them from here once the code knows them.
 */
const PENDING_SERVICES = ['indexer'];
const PENDING_VARIABLES = ['RAG_RUN_INDEXER'];

const defaults = loadConfig({ NODE_ENV: 'development' }).ports;
const serviceNames = SERVICES.map((s) => s.name);

/** What the code says the deploy files may name, run and probe. */
export const FACTS: ProjectFacts = {
  services: new Set([...serviceNames, ...PENDING_SERVICES]),
  variables: new Set([...CONFIG_VARIABLES, ...PENDING_VARIABLES]),
  facePorts: { accounts: defaults.accounts, keys: defaults.keys, webhooks: defaults.webhooks, rag: defaults.rag, mcp: defaults.mcp },
  adminServices: new Set(['keys']),
  healthPaths: { readiness: '/health', liveness: '/health/live' },
  autoscaled: ['keys', 'rag'],
  privatePortNames: new Set(['ops', 'admin']),
};
