import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { expect } from 'chai';
import { freePort } from '../../deploy/local/processes.ts';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { testEnv } from './env.ts';

/** Free ports for the services a retrieval test runs: keys (the gate validates there), rag, mcp. */
export async function retrievalPorts(): Promise<{ keys: number; rag: number; mcp: number }> {
  return { keys: await freePort(), rag: await freePort(), mcp: await freePort() };
}

/**
 * The environment of a test of the gated retrieval faces: its own ports, the gate validating at its
 * keys service, `workspace` the only root a project may be in (shared by its customers unless the
 * overrides say per-customer), the indexes under `dir`.
 */
export function retrievalEnv(
  stack: StackEnv,
  options: { ports: { keys: number; rag: number; mcp: number }; dir: string; workspace: string; sharedSecret: string },
  overrides: NodeJS.ProcessEnv = {},
): NodeJS.ProcessEnv {
  return testEnv(stack, {
    KEYS_PORT: String(options.ports.keys),
    RAG_PORT: String(options.ports.rag),
    MCP_PORT: String(options.ports.mcp),
    AUTH_URL: `http://127.0.0.1:${options.ports.keys}`,
    WEBHOOK_SECRET: options.sharedSecret,
    RAG_ROOTS: options.workspace,
    RAG_DATA_DIR: join(options.dir, 'rag'),
    // These suites share one fixture folder between their customers; test/e2e/rag-tenancy.e2e.spec.ts
    // runs the default per-customer layout.
    RAG_ROOTS_LAYOUT: 'shared',
    ...overrides,
  });
}

export interface MintedKey {
  apiKey: string;
  customerId: string;
  subscriptionId: string;
}

/** A key of a new customer and subscription, straight from POST /generate. */
export async function mintKey(keysUrl: string, sharedSecret: string, tier: 'free' | 'pro' | 'team', name: string): Promise<MintedKey> {
  const customerId = `cus-${name}-${randomUUID()}`;
  const subscriptionId = `sub-${name}-${randomUUID()}`;
  const res = await fetch(`${keysUrl}/generate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${sharedSecret}` },
    body: JSON.stringify({ customerId, email: `${name}@example.test`, tier, subscriptionId }),
  });
  expect(res.status, `minting a ${tier} key`).to.equal(201);
  return { apiKey: ((await res.json()) as { apiKey: string }).apiKey, customerId, subscriptionId };
}
