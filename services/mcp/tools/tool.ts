import type { CallToolResult, McpServer, ResourceLink, ToolAnnotations } from '@modelcontextprotocol/server';
import type { z } from 'zod';
import { isTransient } from '../../../events/errors.ts';
import type { IntegrationDeps } from '../../integration/app/deps.ts';
import type { KeyIdentity } from '../../keys/assess.ts';
import type { Logger } from '../../platform/logger.ts';
import { HttpError } from '../../platform/http/errors.ts';
import type { Caller } from '../../premium/caller.ts';
import type { RagEngine } from '../../rag/engine.ts';
import type { RagHealth } from '../../premium/health.ts';
import type { VisionEngine } from '../../vision/engine.ts';

/** What a tool call runs with: the caller the gate let through on this HTTP request, and the engine. */
export interface ToolContext {
  engine: RagEngine;
  vision: VisionEngine;
  integration: IntegrationDeps;
  caller: Caller;
  identity: KeyIdentity;
  /** The HTTP request's id: the correlation id of every event the call publishes. */
  correlationId: string;
  health: RagHealth;
  log: Logger;
  /** The names of the tools this server lists (api_info tells them). */
  toolNames: readonly string[];
}

export interface Tool {
  name: string;
  register(server: McpServer, ctx: ToolContext): void;
}

/**
 * Reports how far a long call has come (notifications/progress), when the client asked for it by
 * giving the call a progressToken; otherwise does nothing. `progress` must grow from one report to
 * the next (the protocol's rule); a report that cannot be sent is dropped, never the call.
 */
export type Progress = (progress: number, total: number | undefined, message: string) => Promise<void>;

const NO_PROGRESS: Progress = () => Promise.resolve();

export interface ToolSpec<I extends z.ZodObject, O extends z.ZodObject> {
  name: string;
  title: string;
  /** What a model reads to decide when and how to call it. */
  description: string;
  input: I;
  output: O;
  annotations: ToolAnnotations;
  run(args: z.output<I>, ctx: ToolContext, signal: AbortSignal, progress: Progress): Promise<z.output<O>>;
  /** The short text rendering of a result, for clients that show only text to their model. */
  render(result: z.output<O>): string;
  /** Screenshots, diffs and reports the result refers to, as resource links a client can open or fetch. */
  links?(result: z.output<O>): ResourceLink[];
}

/**
 * A tool over the application code the HTTP face calls. A refusal of that code (an HttpError: 404,
 * 403 USAGE_EXCEEDED, 400…) comes back as a tool error with its message and code, as the HTTP face
 * would answer it; an outage as a retryable tool error; anything else is logged and answered with
 * nothing of its inside.
 */
export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(spec: ToolSpec<I, O>): Tool {
  return {
    name: spec.name,
    register(server, ctx) {
      // Widened to the plain object schema, so the SDK's callback type resolves (args: an object).
      const inputSchema: z.ZodObject = spec.input;
      const outputSchema: z.ZodObject = spec.output;
      server.registerTool(
        spec.name,
        { title: spec.title, description: spec.description, inputSchema, outputSchema, annotations: spec.annotations },
        async (args, call): Promise<CallToolResult> => {
          try {
            const token = call.mcpReq._meta?.progressToken;
            let last = -1;
            const progress: Progress =
              token === undefined
                ? NO_PROGRESS
                : async (value, total, message) => {
                    if (value <= last) return;
                    last = value;
                    await call.mcpReq
                      .notify({
                        method: 'notifications/progress',
                        params: { progressToken: token, progress: value, ...(total === undefined ? {} : { total }), message },
                      })
                      .catch(() => undefined);
                  };
            const result = await spec.run(args as z.output<I>, ctx, call.mcpReq.signal, progress);
            return { content: [{ type: 'text', text: spec.render(result) }, ...(spec.links?.(result) ?? [])], structuredContent: result };
          } catch (err) {
            return toolError(err, ctx, spec.name);
          }
        },
      );
    },
  };
}

export function toolError(err: unknown, ctx: Pick<ToolContext, 'log' | 'correlationId'>, tool: string): CallToolResult {
  const failed = (body: { error: string; code: string } & Record<string, unknown>): CallToolResult => ({
    isError: true,
    content: [{ type: 'text', text: `${body.error} (${body.code})` }],
    structuredContent: body,
  });
  if (err instanceof HttpError) return failed({ error: err.message, code: err.code, ...err.details });
  if (isTransient(err)) {
    ctx.log.warn({ tool, err: (err as Error).message }, 'tool call: dependency unavailable');
    return failed({ error: 'a dependency is unavailable; retry shortly', code: 'UNAVAILABLE', retryAfterSeconds: 5 });
  }
  ctx.log.error({ tool, err }, 'tool call failed');
  return failed({ error: `internal error; request id ${ctx.correlationId}`, code: 'INTERNAL', requestId: ctx.correlationId });
}
