import { SERVICES } from '../../../app/registry.ts';
import { CONFIG_VARIABLES, loadConfig, PRODUCTION_TOPIC_PARTITIONS } from '../../../services/platform/config.ts';
import type { ProjectFacts } from './manifest-rules.ts';

const development = loadConfig({ NODE_ENV: 'development' });
const defaults = development.ports;
const SHUTDOWN = ['SHUTDOWN_DELAY_MS', 'SHUTDOWN_DRAIN_MS', 'SHUTDOWN_GRACE_MS'] as const;

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
  publicUrls: {
    // The pages console links point at (`${CONSOLE_PUBLIC_URL}/...`).
    CONSOLE_PUBLIC_URL: { path: '/keys', services: ['console'] },
    // SSO redirects come back to `${ACCOUNTS_PUBLIC_URL}/auth/sso/callback` (config.ts, sso.callbackUrl).
    ACCOUNTS_PUBLIC_URL: { path: '/auth/sso/callback', services: ['accounts'] },
    // Visual-test diffs are linked as `${RAG_PUBLIC_URL}/api/glm/diffs/<id>` (run-test-suite.ts).
    RAG_PUBLIC_URL: { path: '/api/glm/diffs/x', services: ['rag'] },
    // OAuth access tokens are bound to the MCP server's own URL, its /mcp (config.ts, publicMcpUrl).
    MCP_PUBLIC_URL: { path: '/mcp', services: ['mcp'] },
    // Pages in their own right: both the accounts face and the console serve a /pricing page.
    PRICING_URL: { path: null, services: ['console', 'accounts'] },
    REACTIVATE_URL: { path: null, services: ['console', 'accounts'] },
  },
  shutdownOf: (env) => {
    const c = loadConfig({
      NODE_ENV: 'development',
      ...Object.fromEntries(SHUTDOWN.flatMap((k) => (env.has(k) ? [[k, env.get(k)]] : []))),
    });
    return { delayMs: c.shutdownDelayMs, drainMs: c.shutdownDrainMs, graceMs: c.shutdownGraceMs };
  },
  // A capture (page load, screenshot) runs up to CAPTURE_TIMEOUT_MS; rag and mcp both run them.
  longestRequestMs: { rag: development.vision.captureTimeoutMs, mcp: development.vision.captureTimeoutMs },
  productionPartitions: PRODUCTION_TOPIC_PARTITIONS,
};
