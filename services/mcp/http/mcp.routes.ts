import type { AuthInfo } from '@modelcontextprotocol/server';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import express, { type Express, type Request, type Response } from 'express';
import type { Admitted, KeyGate } from '../../keys/gate.ts';
import type { Logger } from '../../platform/logger.ts';
import type { McpServer } from '@modelcontextprotocol/server';

export const MCP_PATH = '/mcp';

export interface McpRouteOptions {
  gate: KeyGate;
  /** A request may push files to index: the MCP body limit is RAG_PUSH_BODY_LIMIT. */
  bodyLimit: string;
  log: Logger;
  /** The server for one admitted request. */
  serverFor(admitted: Admitted, correlationId: string): McpServer;
}

/**
 * Streamable HTTP at /mcp behind the key gate. The gate runs on every HTTP request before any MCP
 * handling (so a key revoked mid-session is refused on its next call), then the SDK's handler
 * serves the request with a server built for that caller. The handler is stateless (each request
 * carries its key; nothing ties a session to a process), so it also serves behind any load
 * balancer; the 2025 session operations GET and DELETE answer 405, as the transport allows.
 */
export function mountMcp(app: Express, options: McpRouteOptions): { close(): Promise<void> } {
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
  const serve = toNodeHandler(handler);
  const json = express.json({ limit: options.bodyLimit, strict: false, type: ['application/json', 'application/*+json'] });

  app.all(MCP_PATH, async (req: Request, res: Response, next) => {
    const admitted = await options.gate.authorize(req, res, { metric: 'queries', amount: 0 });
    if (!admitted) return;
    res.locals.mcpAdmitted = admitted;
    next();
  }, json, async (req: Request, res: Response) => {
    const admitted = res.locals.mcpAdmitted as Admitted;
    const auth: AuthInfo = { token: admitted.identity.keyHash, clientId: admitted.identity.customerId, scopes: ['visionRAG'] };
    admissions.set(auth, { admitted, correlationId: req.id });
    (req as Request & { auth?: AuthInfo }).auth = auth;
    await serve(req, res, req.body);
  });
  return { close: () => handler.close() };
}
