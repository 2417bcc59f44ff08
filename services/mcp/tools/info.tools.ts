import { z } from 'zod';
import { limitsOf, TIERS } from '../../kernel/tiers.ts';
import { API_PATHS } from '../../premium/api-paths.ts';
import { apiPathsAnswer, ragHealthAnswer } from '../../premium/premium-answers.ts';
import { TOP_K_MAX } from '../../rag/input.ts';
import { VERSION } from '../../platform/version.ts';
import { defineTool, type Tool } from './tool.ts';

export const healthCheckTool = defineTool({
  name: 'health_check',
  title: 'Service health',
  description:
    'Tells whether the vision RAG service is healthy, degraded (up, but a feature does not work here) or unhealthy, and which features work in this deployment.',
  input: z.object({}),
  output: ragHealthAnswer,
  annotations: { readOnlyHint: true, openWorldHint: false },
  run: async (_args, ctx) => ctx.health.report(),
  render: (r) =>
    `${r.service} ${r.version} (${r.environment}) is ${r.status}; features: ${Object.entries(r.features)
      .map(([name, on]) => `${name} ${on ? 'on' : 'off'}`)
      .join(', ')}`,
});

const quota = z.object({
  used: z.number(),
  limit: z.number().describe('-1 is unlimited'),
  remaining: z.number().describe('-1 is unlimited'),
});

export const apiInfoTool = defineTool({
  name: 'api_info',
  title: 'About this server and your key',
  description:
    "Describes this server: its tools, the HTTP API beside it, the size limits of pushed files, and your key's tier, rate limit and monthly usage.",
  input: z.object({}),
  output: z.object({
    name: z.string(),
    version: z.string(),
    tools: z.array(z.string()),
    http: apiPathsAnswer,
    limits: z.object({
      topKMax: z.number(),
      pushMaxFiles: z.number().describe('Files per rag_index push.'),
      maxFileBytes: z.number().describe('Bytes per file; larger files are refused (pushed) or skipped (project folder).'),
      pushBodyLimit: z.string().describe('Size of one MCP request, pushed files included.'),
    }),
    caller: z.object({
      customerId: z.string(),
      tier: z.enum(TIERS),
      requestsPerMinute: z.number(),
      usage: z.record(z.string(), quota),
    }),
  }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(_args, ctx) {
    const { rag } = ctx.engine.deps.config;
    return {
      name: 'svc-mcp',
      version: VERSION,
      tools: [...ctx.toolNames],
      http: API_PATHS,
      limits: { topKMax: TOP_K_MAX, pushMaxFiles: rag.pushMaxFiles, maxFileBytes: rag.maxFileBytes, pushBodyLimit: rag.pushBodyLimit },
      caller: {
        customerId: ctx.identity.customerId,
        tier: ctx.identity.tier,
        requestsPerMinute: limitsOf(ctx.identity.tier).requestsPerMinute,
        usage: ctx.caller.usage ?? {},
      },
    };
  },
  render: (r) => {
    const usage = Object.entries(r.caller.usage)
      .map(([metric, q]) => `${metric} ${q.used}/${q.limit === -1 ? 'unlimited' : q.limit}`)
      .join(', ');
    return `${r.name} ${r.version}: tools ${r.tools.join(', ')}; your tier ${r.caller.tier} (${r.caller.requestsPerMinute} requests/min), usage this month: ${usage || 'none'}`;
  },
});

export const INFO_TOOLS: readonly Tool[] = [healthCheckTool, apiInfoTool];
