import { z } from 'zod';
import type { ApiResponse } from '../platform/http/openapi.ts';
import { errorAnswer } from '../platform/http/platform-answers.ts';

/** What the premium faces share in their answers: their errors, their health, the gate's refusals. */

/** The vision RAG face's errors: `{success: false, error, code}` and the details of each. */
export const ragErrorAnswer = errorAnswer.extend({ success: z.literal(false) });

export const featuresAnswer = z.object({ rag: z.boolean(), glmVision: z.boolean(), contextAware: z.boolean(), autoGenerate: z.boolean() });

/** GET /health of the rag and MCP faces, and the health_check tool (health.ts). */
export const ragHealthAnswer = z.object({
  status: z.enum(['healthy', 'degraded', 'unhealthy']),
  service: z.string(),
  version: z.string(),
  environment: z.string(),
  timestamp: z.string(),
  features: featuresAnswer,
});

/** GET /api, and the api_info tool's http field (api-paths.ts). */
export const apiPathsAnswer = z.object({
  health: z.string(),
  rag: z.object({ setup: z.string(), query: z.string(), index: z.string() }),
  glm: z.object({ capture: z.string(), analyze: z.string(), test: z.string() }),
  integration: z.object({ validate: z.string(), generate: z.string(), report: z.string() }),
});

const RATE = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'] as const;

/** The gate's refusals, before any operation runs (keys/gate.ts), in a face's error shape. */
export const gateResponses = (errorSchema: z.ZodType): Record<number, ApiResponse> => ({
  400: { description: 'A bad body, or arguments the operation refuses.', schema: errorSchema },
  401: { description: 'No API key.', schema: errorSchema },
  403: {
    description: 'A key that does not validate, a subscription without vision RAG, or a quota used up (with an upgrade URL).',
    schema: errorSchema,
    headers: RATE,
  },
  429: { description: 'Rate limited.', schema: errorSchema, headers: [...RATE, 'Retry-After'] },
});

export const GATED = ['apiKey', 'bearerApiKey'] as const;
