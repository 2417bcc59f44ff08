import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { paths as AccountsPaths } from '../../openapi/accounts.ts';
import type { paths as KeysAdminPaths } from '../../openapi/keys-admin.ts';
import type { paths as KeysPaths } from '../../openapi/keys.ts';
import type { paths as McpPaths } from '../../openapi/mcp.ts';
import type { paths as RagPaths } from '../../openapi/rag.ts';
import type { paths as WebhooksPaths } from '../../openapi/webhooks.ts';

/**
 * Typed clients of the HTTP faces: openapi-fetch over the types openapi-typescript generated from
 * each face's document (openapi/<face>.ts, `npm run openapi`). Paths, bodies, parameters and
 * answers are checked by tsc against the documents, so a client that calls a route the way the
 * service no longer takes it does not compile.
 */

type Options = Omit<ClientOptions, 'baseUrl'>;

// Fetch is looked up at each call, not when the client is made, so whatever fetch is current is used.
const lateFetch = (request: Request) => globalThis.fetch(request);

export const accountsClient = (baseUrl: string, options: Options = {}): Client<AccountsPaths> =>
  createClient<AccountsPaths>({ fetch: lateFetch, ...options, baseUrl });
export const keysClient = (baseUrl: string, options: Options = {}): Client<KeysPaths> =>
  createClient<KeysPaths>({ fetch: lateFetch, ...options, baseUrl });
export const keysAdminClient = (baseUrl: string, options: Options = {}): Client<KeysAdminPaths> =>
  createClient<KeysAdminPaths>({ fetch: lateFetch, ...options, baseUrl });
export const webhooksClient = (baseUrl: string, options: Options = {}): Client<WebhooksPaths> =>
  createClient<WebhooksPaths>({ fetch: lateFetch, ...options, baseUrl });
export const ragClient = (baseUrl: string, options: Options = {}): Client<RagPaths> =>
  createClient<RagPaths>({ fetch: lateFetch, ...options, baseUrl });
export const mcpClient = (baseUrl: string, options: Options = {}): Client<McpPaths> =>
  createClient<McpPaths>({ fetch: lateFetch, ...options, baseUrl });
