import { Client, SdkHttpError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { errorMessage } from '../../events/errors.ts';
import { Server, type CallToolResult } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';
import { isWellFormedKey } from '../keys/key-format.ts';
import { RemoteValidator } from '../keys/remote-validator.ts';
import { ConfigError } from '../platform/config.ts';
import { VERSION } from '../platform/version.ts';
import { MCP_PATH } from './http/mcp.routes.ts';

/**
 * `svc mcp --stdio`: the MCP tools over stdio for a local assistant, as a bridge to the MCP server
 * (Streamable HTTP) with the key from SVC_API_KEY. A bridge rather than a second engine: the index
 * stores belong to the process that serves them, and every call still passes the server's gate, so
 * a revoked key stops working here as it does over HTTP.
 */

const bridgeSchema = z.object({
  SVC_API_KEY: z
    .string({ error: 'is required: the API key the tools run under (svc_ and 33 letters or digits)' })
    .refine(isWellFormedKey, { error: 'is not an API key (svc_ and 33 letters or digits)' }),
  AUTH_URL: z.url({ error: 'must be an http(s) URL' }).default('http://127.0.0.1:8082'),
  MCP_URL: z.url({ error: 'must be an http(s) URL' }).default(`http://127.0.0.1:8085${MCP_PATH}`),
});

export interface BridgeConfig {
  apiKey: string;
  authUrl: string;
  mcpUrl: string;
}

/** The bridge's own configuration (it needs none of the services' secrets); each problem named. */
export function loadBridgeConfig(env: NodeJS.ProcessEnv): BridgeConfig {
  const parsed = bridgeSchema.safeParse({
    SVC_API_KEY: env.SVC_API_KEY || undefined,
    AUTH_URL: env.AUTH_URL || undefined,
    MCP_URL: env.MCP_URL || undefined,
  });
  // The key's value never goes into a message: only the variable's name and what is wrong.
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`));
  return { apiKey: parsed.data.SVC_API_KEY, authUrl: parsed.data.AUTH_URL, mcpUrl: parsed.data.MCP_URL };
}

/** Why a key cannot run the tools: said before the assistant sees an empty tool list. */
export class KeyRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyRefusedError';
  }
}

/** The key as the key-validation service sees it: valid, with the visionRAG feature. */
export async function checkKey(config: BridgeConfig): Promise<void> {
  const { result } = await new RemoteValidator(config.authUrl).validate(config.apiKey, { ip: '127.0.0.1' });
  if (!result.valid) throw new KeyRefusedError(`SVC_API_KEY is refused by ${config.authUrl}: ${result.error} (${result.code})`);
  if (!result.features.visionRAG)
    throw new KeyRefusedError(
      `SVC_API_KEY is on the ${result.identity.tier} tier, which does not include the vision RAG tools: upgrade to pro or team`,
    );
}

/** A refusal of the HTTP server (the gate, an outage) as the tool error an assistant can read. */
function refusal(err: unknown): CallToolResult {
  if (!(err instanceof SdkHttpError))
    return { isError: true, content: [{ type: 'text', text: `the MCP server could not be reached: ${errorMessage(err)}` }] };
  let body: { error?: unknown; code?: unknown } = {};
  try {
    body = JSON.parse(String(err.data.text ?? '')) as typeof body;
  } catch {
    // not JSON: the status says enough
  }
  const error = typeof body.error === 'string' ? body.error : (err.statusText ?? 'refused');
  const code = typeof body.code === 'string' ? body.code : `HTTP_${err.status}`;
  return {
    isError: true,
    content: [{ type: 'text', text: `the MCP server answered ${err.status}: ${error} (${code})` }],
    structuredContent: { error, code, status: err.status },
  };
}

/**
 * Connects to the MCP server and serves its tools on stdin/stdout until stdin ends (the assistant
 * closed it) or a signal comes. Resolves when the bridge has closed.
 */
export async function runStdioBridge(config: BridgeConfig, signal: AbortSignal): Promise<void> {
  const client = new Client({ name: 'svc-mcp-stdio', version: VERSION });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(config.mcpUrl), { requestInit: { headers: { 'x-api-key': config.apiKey } } }),
  );
  const handle = serveStdio(() => {
    const instructions = client.getInstructions();
    const server = new Server(
      { name: 'svc-mcp', title: 'svc vision RAG (stdio)', version: VERSION },
      { capabilities: { tools: {} }, ...(instructions ? { instructions } : {}) },
    );
    server.setRequestHandler('tools/list', (request) => client.listTools(request.params));
    server.setRequestHandler('tools/call', async (request) => {
      try {
        return (await client.callTool(request.params)) as CallToolResult;
      } catch (err) {
        return refusal(err);
      }
    });
    return server;
  });
  await new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await handle.close().catch(() => undefined);
  await client.close().catch(() => undefined);
}
