import { z } from 'zod';
import type { ApiFace, ApiOperation, ApiResponse } from '../../platform/http/openapi.ts';
import { errorAnswer } from '../../platform/http/platform-answers.ts';
import { VERSION } from '../../platform/version.ts';
import { GATED, gateResponses, ragHealthAnswer } from '../../premium/premium-answers.ts';
import { MCP_PATH } from './mcp.routes.ts';
import { PROTECTED_RESOURCE_PATH } from './oauth-resource.ts';

const protectedResourceMetadata = z
  .object({ resource: z.string(), authorization_servers: z.array(z.string()), scopes_supported: z.array(z.string()).optional() })
  .catchall(z.unknown());

/**
 * The MCP face's HTTP surface: the Streamable HTTP transport at /mcp. What travels inside it (the
 * tools, their arguments and results) is MCP's to describe, by tools/list, from the tools' own
 * schemas (services/mcp/tools); here, the JSON-RPC 2.0 envelope and the HTTP answers around it.
 */

const id = z.union([z.string(), z.number(), z.null()]);
const message = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: id.optional(),
    method: z.string().optional(),
    params: z.unknown().optional(),
    result: z.unknown().optional(),
    error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }).optional(),
  })
  .describe('A JSON-RPC 2.0 request, notification or response.');

export const jsonRpcBody = z.union([message, z.array(message)]);

const jsonRpcError = z.object({
  jsonrpc: z.literal('2.0'),
  id: id,
  error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }),
});

const error = (description: string, headers?: readonly string[]): ApiResponse => ({
  description,
  schema: errorAnswer,
  ...(headers ? { headers } : {}),
});

// The SDK's own answer: a JSON-RPC error.
const notServed: Record<number, ApiResponse> = {
  405: { description: 'Stateless: the 2025 session stream and session deletion are not served.', schema: jsonRpcError, headers: ['Allow'] },
};

export const mcpApi: ApiFace = {
  name: 'mcp',
  title: 'svc MCP server',
  description:
    'The vision RAG operations as MCP tools over Streamable HTTP (stateless), behind the key gate. The tools and their schemas: tools/list. Every route, body and status: docs/api.md.',
  version: VERSION,
  errorSchema: errorAnswer,
  operations: [
    {
      method: 'post',
      path: MCP_PATH,
      summary: 'An MCP message or batch',
      description: 'Each call of a batch counts against the rate limit as a request of its own.',
      tags: ['mcp'],
      security: GATED,
      body: { schema: jsonRpcBody },
      responses: {
        200: {
          description: 'The JSON-RPC answer, as JSON or as an event stream.',
          schema: jsonRpcBody,
          alternatives: { 'text/event-stream': z.string() },
        },
        202: { description: 'Notifications only: accepted, nothing to answer.' },
        ...gateResponses(errorAnswer),
        401: error(
          'No credentials (WWW-Authenticate: Bearer resource_metadata="…" starts an assistant’s OAuth flow), or an OAuth access token that is expired, revoked, unknown or bound to another resource (error="invalid_token").',
          ['WWW-Authenticate'],
        ),
        503: error('The authorization server could not be asked about an access token, or a dependency is down.', ['Retry-After']),
        429: {
          description:
            "Rate limited: by the gate, in the error shape; or a batch bigger than what is left of the key's window, refused whole before any of it runs, as a JSON-RPC error (data.code RATE_LIMITED).",
          schema: z.union([errorAnswer, jsonRpcError]),
          headers: gateResponses(errorAnswer)[429]?.headers ?? [],
        },
        400: { description: 'Not a JSON-RPC 2.0 message or batch.', schema: z.union([jsonRpcError, errorAnswer]) },
        415: error('A Content-Type that is not JSON.'),
      },
    },
    ...[PROTECTED_RESOURCE_PATH, `${PROTECTED_RESOURCE_PATH}${MCP_PATH}`].map(
      (path): ApiOperation => ({
        method: 'get',
        path,
        summary: 'Protected resource metadata (RFC 9728): where assistants get an OAuth token for /mcp',
        tags: ['oauth'],
        responses: {
          200: { description: 'The metadata, naming the authorization server (the accounts face).', schema: protectedResourceMetadata },
        },
      }),
    ),
    { method: 'get', path: MCP_PATH, summary: 'The 2025 session stream (not served)', tags: ['mcp'], responses: notServed },
    { method: 'delete', path: MCP_PATH, summary: 'Ending a 2025 session (not served)', tags: ['mcp'], responses: notServed },
    {
      method: 'get',
      path: '/health',
      summary: 'Health, and which features work in this deployment',
      tags: ['health'],
      responses: {
        200: { description: 'Healthy or degraded.', schema: ragHealthAnswer },
        503: { description: 'Unhealthy.', schema: ragHealthAnswer },
      },
    },
  ],
};
