import { SERVICES } from '../../../app/registry.ts';
import { CONFIG_VARIABLES, loadConfig } from '../../../services/platform/config.ts';
import type { ProjectFacts } from './manifest-rules.ts';

const defaults = loadConfig({ NODE_ENV: 'development' }).ports;

/** What the code says the deploy files may name, run and probe. */
export const FACTS: ProjectFacts = {
  services: new Set(SERVICES.map((s) => s.name)),
  variables: new Set(CONFIG_VARIABLES),
  facePorts: {
    accounts: defaults.accounts,
    keys: defaults.keys,
    webhooks: defaults.webhooks,
    rag: defaults.rag,
    mcp: defaults.mcp,
    console: defaults.console,
  },
  adminServices: new Set(['keys']),
  healthPaths: { readiness: '/health', liveness: '/health/live' },
  autoscaled: ['keys', 'rag'],
  privatePortNames: new Set(['ops', 'admin']),
};
