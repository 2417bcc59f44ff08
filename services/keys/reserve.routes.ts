import type { Express } from 'express';
import { z } from 'zod';
import { clientIp } from '../platform/http/client-ip.ts';
import { badRequest } from '../platform/http/errors.ts';
import { METRICS, type Metric } from '../kernel/tiers.ts';
import type { ReserveAnswer } from './keys-answers.ts';
import type { KeyValidator } from './validator.ts';

export const reserveInput = z.object({
  apiKey: z.string({ error: 'apiKey is required' }).min(1, { error: 'apiKey is required' }),
  metric: z.enum(METRICS as [Metric, ...Metric[]], { error: `metric must be one of ${METRICS.join(', ')}` }),
  amount: z.number().int().min(1).max(10_000),
});

export const releaseInput = z.object({
  apiKey: z.string({ error: 'apiKey is required' }).min(1, { error: 'apiKey is required' }),
  reservation: z.uuid({ error: 'reservation is not one this service gave' }),
});

/**
 * POST /reserve and POST /release: how a premium server on another host holds quota for a use before
 * recording it (usage.incremented), and gives it back when the use is not served. See gate.ts.
 */
export function mountReserveRoutes(app: Express, deps: { validator: KeyValidator }): void {
  app.post('/reserve', async (req, res) => {
    const parsed = reserveInput.safeParse(req.body);
    if (!parsed.success) throw badRequest(parsed.error.issues[0]?.message ?? 'invalid request body');
    const { apiKey, metric, amount } = parsed.data;
    const answer = await deps.validator.reserve(apiKey, { ip: clientIp(req), metric, amount });
    res.status(!answer.reserved && answer.code === 'RATE_LIMITED' ? 429 : 200).json(answer satisfies ReserveAnswer);
  });

  app.post('/release', async (req, res) => {
    const parsed = releaseInput.safeParse(req.body);
    if (!parsed.success) throw badRequest(parsed.error.issues[0]?.message ?? 'invalid request body');
    await deps.validator.release(parsed.data.apiKey, parsed.data.reservation);
    res.status(204).end();
  });
}
