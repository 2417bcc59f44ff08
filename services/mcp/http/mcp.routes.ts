import type { AuthInfo } from '@modelcontextprotocol/server';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import express, { type Express, type Request, type Response } from 'express';
import { presentedKey, type Admitted, type KeyGate } from '../../keys/gate.ts';
import type { Logger } from '../../platform/logger.ts';
import { admitBeforeBody } from '../../premium/gate-first.ts';
import { admitter } from '../../premium/gated-request.ts';
import type { McpServer } from '@modelcontextprotocol/server';
import type { ResourceServer } from './oauth-resource.ts';

export const MCP_PATH = '/mcp';
const MCP_METHODS = ['POST', 'GET', 'DELETE'];

export interface McpRouteOptions {
  gate: KeyGate;
  /** A request may push files to index: the MCP body limit is RAG_PUSH_BODY_LIMIT. */
  bodyLimit: string;
  log: Logger;
  /** The server for one admitted request. */
  serverFor(admitted: Admitted, correlationId: string): McpServer;
  /** OAuth access tokens (MCP authorization) beside keys: absent, keys only. */
  resourceServer?: ResourceServer;
}

/**
 * Streamable HTTP at /mcp behind the key gate. The gate runs on every HTTP request before any MCP
 * handling (so a key revoked mid-session is refused on its next call), then the SDK's handler
 * serves the request with a server built for that caller. The handler is stateless (each request
 * carries its key; nothing ties a session to a process), so it also serves behind any load
 * balancer; the 2025 session operations GET and DELETE answer 405, as the transport allows.
 */
export function mountMcp(app: Express, options: McpRouteOptions): { close(): Promise<void> } {
  const admit = admitter(options.gate);
  // The SDK hands authInfo through by reference: the object set on the request finds its caller.
  const admissions = new WeakMap<AuthInfo, { admitted: Admitted; correlationId: string }>();
  const handler = createMcpHandler(
    (ctx) => {
      const admission = ctx.authInfo && admissions.get(ctx.authInfo);
      // Unreachable while every request passes the gate below; refuse rather than serve anonymously.
      if (!admission) throw new Error('MCP request without an admitted key');
      return options.serverFor(admission.admitted, admission.correlationId);
    },
    { legacy: 'stateless', onerror: (err) => options.log.warn({ err: err.message }, 'mcp: request rejected') },
  );
  // Failures of the adapter itself (turning the Node request into a web one) were answered 500 without a word.
  // A client hanging up mid-request is its own business, not an error of ours.
  const serve = toNodeHandler(handler, {
    onerror: (err) =>
      (err as { code?: unknown }).code === 'ECONNRESET' || err.name === 'AbortError'
        ? options.log.debug({ err: err.message }, 'mcp: client went away')
        : options.log.error({ err }, 'mcp: request could not be handed to the MCP handler'),
  });
  const json = express.json({ limit: options.bodyLimit, strict: false, type: ['application/json', 'application/*+json'] });

  /**
   * Admits `count` more requests for the messages of a batch past the first: each is checked and
   * counted against the key's rate limit as if it had come alone, so a batch of 20 tool calls costs
   * 20 requests, not one (a batch of 100 used to move X-RateLimit-Remaining by one). A batch the
   * key has no room left for is refused whole, 429, before anything in it runs, and before it
   * spends what is left. What each call then does is metered by the operation it runs, as for a
   * call on its own (services/rag/app/meter.ts).
   */
  async function admitRest(req: Request, res: Response, count: number): Promise<boolean> {
    const left = Number(res.getHeader('X-RateLimit-Remaining') ?? Number.NaN);
    if (Number.isFinite(left) && left < count) {
      const reset = Number(res.getHeader('X-RateLimit-Reset') ?? Number.NaN);
      const retryAfter = Number.isFinite(reset) ? Math.max(1, Math.ceil(reset - Date.now() / 1000)) : 1;
      res
        .set('Retry-After', String(retryAfter))
        .status(429)
        .json({
          jsonrpc: '2.0',
          error: {
            code: -32000,
            message: `Rate limit exceeded: the batch holds ${count + 1} requests and the key has ${left + 1} left in this window; retry later or send fewer`,
            data: { code: 'RATE_LIMITED' },
          },
          id: null,
        });
      return false;
    }
    // One after the other: a refusal (another request of the key took the room meanwhile) is
    // answered by the gate, once, and stops the batch there.
    for (let i = 0; i < count; i++) if (!(await admit(req, res, res.locals.mcpKey as string | undefined))) return false;
    return true;
  }

  app.all(
    MCP_PATH,
    async (req: Request, res: Response, next) => {
      // The transport's methods are POST, GET and DELETE; the SDK answered any other with a 500
      // (found by npm run fuzz).
      if (!MCP_METHODS.includes(req.method)) {
        res
          .set('Allow', MCP_METHODS.join(', '))
          .status(405)
          .json({ error: `${req.method} is not an MCP transport method`, code: 'METHOD_NOT_ALLOWED' });
        return;
      }
      const admitted = await admitBeforeBody(req, res, async () => {
        // An OAuth access token stands for the key chosen at consent, which then passes the same gate.
        const credential = options.resourceServer ? await options.resourceServer.credential(req, res, presentedKey(req)) : null;
        if (credential?.kind === 'refused') return null;
        const apiKey = credential?.kind === 'key' ? credential.apiKey : undefined;
        res.locals.mcpKey = apiKey;
        return admit(req, res, apiKey);
      });
      if (!admitted) return;
      res.locals.mcpAdmitted = admitted;
      next();
    },
    json,
    async (req: Request, res: Response) => {
      // The SDK validates a message recursively: thousands of levels overflow its stack and it answers
      // 500 (found by npm run fuzz). No MCP message is anywhere near this deep.
      // A body that is not a JSON-RPC 2.0 message or batch (a bare number, jsonrpc "1.0", a batch reusing an id) makes the SDK
      // answer 500 (found by npm run fuzz); it is the client's malformed request.
      const body: unknown = req.body;
      if (req.method === 'POST' && body === undefined) {
        // The JSON parser passed it over: not application/json (or a duplicated Content-Type, of which Node keeps the first).
        res.status(415).json({
          jsonrpc: '2.0',
          error: { code: -32000, message: 'Unsupported Media Type: Content-Type must be application/json' },
          id: null,
        });
        return;
      }
      // An Upgrade (a WebSocket handshake) is not served here; HTTP lets a server ignore it, and the
      // SDK's request conversion fails on it with a 500 (found by npm run fuzz).
      delete req.headers.upgrade;
      if (/\bupgrade\b/i.test(String(req.headers.connection ?? ''))) delete req.headers.connection;
      const twice = MCP_SINGLE_HEADERS.find((name) => req.rawHeaders.filter((h, i) => i % 2 === 0 && h.toLowerCase() === name).length > 1);
      if (twice) {
        res
          .status(400)
          .json({ jsonrpc: '2.0', error: { code: -32600, message: `Invalid Request: ${twice} given more than once` }, id: null });
        return;
      }
      if (req.method === 'POST' && !isJsonRpcShaped(body)) {
        res.status(400).json({
          jsonrpc: '2.0',
          error: {
            code: -32600,
            message: 'Invalid Request: a JSON-RPC 2.0 message is an object with jsonrpc "2.0", or an array of them',
          },
          id: null,
        });
        return;
      }
      const batchesRemovedIn = batchRefusedFor(req.get('mcp-protocol-version'));
      if (Array.isArray(body) && batchesRemovedIn) {
        res.status(400).json({
          jsonrpc: '2.0',
          error: {
            code: -32600,
            message: `Invalid Request: MCP ${batchesRemovedIn} has no JSON-RPC batches (removed in 2025-06-18); send each message in a request of its own`,
          },
          id: null,
        });
        return;
      }
      if (Array.isArray(body) && body.length > MAX_BATCH) {
        res.status(400).json({
          jsonrpc: '2.0',
          error: { code: -32600, message: `Invalid Request: a batch holds at most ${MAX_BATCH} messages, this one ${body.length}` },
          id: null,
        });
        return;
      }
      // The body is parsed already; the SDK reads the header again and answers 500 to one whose
      // parameters do not parse (`application/json;;;`, found by npm run fuzz).
      if (req.method === 'POST') req.headers['content-type'] = 'application/json';
      const badInitialize = Array.isArray(body) ? null : initializeWithoutVersion(body);
      if (badInitialize !== null) {
        // The SDK answers an initialize without a protocol version with a 500 (found by npm run fuzz).
        res.status(200).json({
          jsonrpc: '2.0',
          id: badInitialize,
          error: { code: -32602, message: 'Invalid params: initialize needs params.protocolVersion, capabilities and clientInfo' },
        });
        return;
      }
      const unserved = unservedMethod(body);
      if (unserved !== null) {
        // The SDK answers a method of a capability this server does not declare (prompts, resources,
        // completion, logging) with a 500 (found by npm run fuzz); JSON-RPC says -32601.
        const single = !Array.isArray(body) ? (body as { id?: unknown }) : null;
        if (single && single.id !== undefined)
          res.status(200).json({ jsonrpc: '2.0', id: single.id, error: { code: -32601, message: `Method not found: ${unserved}` } });
        else if (single) res.status(202).end();
        else
          res.status(400).json({
            jsonrpc: '2.0',
            error: { code: -32600, message: `Invalid Request: the batch holds ${unserved}, which this server does not serve` },
            id: null,
          });
        return;
      }
      if (deeperThan(req.body, MAX_NESTING)) {
        res.status(400).json({
          jsonrpc: '2.0',
          error: { code: -32600, message: `Invalid Request: nested deeper than ${MAX_NESTING} levels` },
          id: null,
        });
        return;
      }
      // The HTTP request was admitted as one; each further message of a batch is a request of its own.
      if (Array.isArray(body) && body.length > 1 && !(await admitRest(req, res, body.length - 1))) return;
      // The adapter builds the SDK's URL as `http://${Host}${req.url}`: an absolute-form request target
      // (`POST http://host/mcp`, which HTTP/1.1 servers must accept) or a Host that is no authority made
      // it throw, answered 500 (found by npm run fuzz). The SDK is handed the origin form and, when the
      // Host cannot be part of a URL, a neutral one; nothing of ours reads them afterwards.
      req.url = originForm(req.url);
      if (!URL.canParse(`http://${req.headers.host ?? ''}${req.url}`)) req.headers.host = 'localhost';
      const admitted = res.locals.mcpAdmitted as Admitted;
      const auth: AuthInfo = { token: admitted.identity.keyHash, clientId: admitted.identity.customerId, scopes: ['visionRAG'] };
      admissions.set(auth, { admitted, correlationId: req.id });
      (req as Request & { auth?: AuthInfo }).auth = auth;
      await serve(req, res, req.body);
    },
  );
  return { close: () => handler.close() };
}

/**
 * The most messages one JSON-RPC batch may hold. The 2025-06-18 revision of MCP dropped batches;
 * 2025-03-26 clients may still send them, and the SDK takes up to 100 at once.
 */
export const MAX_BATCH = 20;

/** The first protocol revision without JSON-RPC batches. */
export const BATCHES_REMOVED_IN = '2025-06-18';

/**
 * The protocol version a request declares (MCP-Protocol-Version) when that revision has no batches,
 * else null: 2025-03-26 clients may batch, and a request without the header is taken as one of those
 * (the transport's rule for a missing header).
 */
export function batchRefusedFor(header: string | undefined): string | null {
  if (!header || !/^\d{4}-\d{2}-\d{2}$/.test(header)) return null;
  return header >= BATCHES_REMOVED_IN ? header : null;
}

/**
 * An object with `jsonrpc: "2.0"`, or a non-empty array of them: what the SDK expects to be handed.
 * Anything else it answers with 500 (a bare number, `jsonrpc: "1.0"`), where it is a bad request.
 */
export function isJsonRpcShaped(body: unknown): boolean {
  // JSON-RPC ids are strings, numbers or null; an object id (thousands of levels deep) overflowed
  // the stack when an answer echoed it (found by npm run fuzz).
  const one = (m: unknown) =>
    m !== null &&
    typeof m === 'object' &&
    !Array.isArray(m) &&
    (m as { jsonrpc?: unknown }).jsonrpc === '2.0' &&
    validId((m as { id?: unknown }).id);
  if (!Array.isArray(body)) return one(body);
  // A batch whose requests share an id cannot be answered one answer per request.
  const ids = body.map((m) => (m as { id?: unknown } | null)?.id).filter((id) => id !== undefined && id !== null);
  return body.length > 0 && body.every(one) && new Set(ids.map((id) => JSON.stringify(id))).size === ids.length;
}

function validId(id: unknown): boolean {
  return id === undefined || id === null || typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
}

/** The path and query of a request target, whichever of origin form (`/mcp?x`) or absolute form (`http://h/mcp?x`) it came in. */
export function originForm(target: string): string {
  if (target.startsWith('/')) return target;
  try {
    const url = new URL(target);
    return `${url.pathname}${url.search}`;
  } catch {
    return MCP_PATH;
  }
}

/** The id of an initialize request whose params lack a string protocolVersion, else null. */
export function initializeWithoutVersion(body: unknown): string | number | null {
  const message = body as { method?: unknown; id?: unknown; params?: unknown } | null;
  if (message?.method !== 'initialize' || (typeof message.id !== 'string' && typeof message.id !== 'number')) return null;
  const params = message.params as { protocolVersion?: unknown; capabilities?: unknown; clientInfo?: unknown } | null | undefined;
  const valid =
    typeof params?.protocolVersion === 'string' &&
    typeof params.capabilities === 'object' &&
    params.capabilities !== null &&
    typeof params.clientInfo === 'object' &&
    params.clientInfo !== null;
  return valid ? null : message.id;
}

/** Capabilities this server does not declare: their methods are not found here. */
const UNSERVED_METHOD = /^(prompts|resources|completion|logging)\//;

/** The first method of the message (or batch) that belongs to a capability this server lacks, or null. */
export function unservedMethod(body: unknown): string | null {
  for (const message of Array.isArray(body) ? body : [body]) {
    const method = (message as { method?: unknown } | null)?.method;
    if (typeof method === 'string' && UNSERVED_METHOD.test(method)) return method.slice(0, 100);
  }
  return null;
}

/** Headers that name one thing: sent twice, Node joins them into a value nobody sent. */
const MCP_SINGLE_HEADERS = ['mcp-session-id', 'mcp-protocol-version'];

/** How deep a JSON-RPC message may nest (objects and arrays). */
export const MAX_NESTING = 64;

/** True when `value` nests objects or arrays more than `limit` levels deep; iterative, so any depth is safe to ask about. */
export function deeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}
