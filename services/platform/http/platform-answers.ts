import { z } from 'zod';
import type { ApiOperation } from './openapi.ts';

/** What every face's platform routes answer (app.ts), and their place in each face's document. */

/** `{error, code}` and the details an error adds (Retry-After's seconds, the request id, an upgrade URL…). */
export const errorAnswer = z
  .object({
    error: z.string().describe('What went wrong, for a person.'),
    code: z.string().describe('What went wrong, for a program: BAD_REQUEST, UNAUTHORIZED, NOT_FOUND, RATE_LIMITED, UNAVAILABLE…'),
  })
  .catchall(z.unknown());

const check = z.object({ ok: z.boolean(), latencyMs: z.number(), error: z.string().optional() });
const consumer = z.object({
  group: z.string(),
  state: z.enum(['starting', 'joined', 'rebalancing', 'restarting', 'crashed', 'stopped']),
  ok: z.boolean(),
  problem: z.string().optional(),
  idleMs: z.number(),
});

/** GET /health: the service's dependencies and consumers (why one failed only for the operators' token). */
export const readinessAnswer = z.object({
  service: z.string(),
  status: z.enum(['ok', 'unavailable']),
  checks: z.record(z.string(), check),
  consumers: z.array(consumer),
  stopping: z.literal(true).optional(),
});

/** GET /health/live. */
export const livenessAnswer = z.object({ service: z.string(), status: z.enum(['ok', 'failed']) });

export function platformOperations(options: { health: boolean; metrics: boolean }): ApiOperation[] {
  const ops: ApiOperation[] = [
    {
      method: 'get',
      path: '/health/live',
      summary: 'Liveness: the process works',
      tags: ['health'],
      responses: {
        200: { description: 'Alive.', schema: livenessAnswer },
        503: { description: 'Not alive: restart it.', schema: livenessAnswer },
      },
    },
  ];
  if (options.health)
    ops.push({
      method: 'get',
      path: '/health',
      summary: 'Readiness: the service can serve',
      description: "Why a check failed is shown only to a caller presenting the operators' shared secret as a bearer token.",
      tags: ['health'],
      responses: {
        200: { description: 'Ready.', schema: readinessAnswer },
        503: { description: 'Not ready (a dependency is down, or the service is stopping).', schema: readinessAnswer },
      },
    });
  if (options.metrics)
    ops.push({
      method: 'get',
      path: '/metrics',
      summary: "The process's Prometheus metrics (private listeners only)",
      tags: ['health'],
      responses: { 200: { description: 'Prometheus text format.', schema: z.string(), contentType: 'text/plain' } },
    });
  return ops;
}
