import type { Express, Response } from 'express';
import { z } from 'zod';
import { clientIp } from '../platform/http/client-ip.ts';
import { HttpError, unauthorized } from '../platform/http/errors.ts';
import { METRICS, periodOf, type Metric } from './tiers.ts';
import type { KeyValidator, LimitDecision } from './validator.ts';

const validateInput = z.object({
  apiKey: z.string({ error: 'apiKey is required' }).min(1, { error: 'apiKey is required' }),
  metric: z.enum(METRICS as [Metric, ...Metric[]]).optional(),
  amount: z.number().int().min(1).max(10_000).optional(),
});

export function setRateHeaders(res: Response, rate: LimitDecision | null): void {
  if (!rate) return;
  // setHeader, not Express's res.set: these go on every response of the hot path.
  res.setHeader('X-RateLimit-Limit', String(rate.limit));
  res.setHeader('X-RateLimit-Remaining', String(Math.max(0, rate.remaining)));
  res.setHeader('X-RateLimit-Reset', String(Math.ceil((Date.now() + rate.resetMs) / 1000)));
  if (!rate.allowed) res.setHeader('Retry-After', String(Math.max(1, Math.ceil(rate.resetMs / 1000))));
}

/** POST /validate and GET /usage: the read side every premium request depends on. */
export function mountValidationRoutes(app: Express, deps: { validator: KeyValidator }): void {
  const { validator } = deps;

  app.post('/validate', async (req, res) => {
    const parsed = validateInput.safeParse(req.body);
    if (!parsed.success) {
      res.status(400).json({ valid: false, error: parsed.error.issues[0]?.message ?? 'invalid request body' });
      return;
    }
    const { apiKey, metric, amount } = parsed.data;
    const { result, rate } = await validator.validate(apiKey, { ip: clientIp(req), ...(metric ? { metric } : {}), ...(amount ? { amount } : {}) });
    setRateHeaders(res, rate);
    if (!result.valid) {
      res.status(result.code === 'RATE_LIMITED' ? 429 : 200).json({ valid: false, error: result.error, code: result.code });
      return;
    }
    res.json({
      valid: true,
      tier: result.identity.tier,
      customerId: result.identity.customerId,
      usage: { queries: result.usage.queries, filesIndexed: result.usage.filesIndexed },
      features: result.features,
    });
  });

  app.get('/usage', async (req, res) => {
    const apiKey = /^Bearer\s+(\S+)$/i.exec(req.get('authorization') ?? '')?.[1];
    if (!apiKey) throw unauthorized('missing API key (Authorization: Bearer <API_KEY>)', { 'WWW-Authenticate': 'Bearer realm="svc-keys"' });
    const { result, rate } = await validator.validate(apiKey, { ip: clientIp(req), metric: 'queries', amount: 0 });
    setRateHeaders(res, rate);
    if (!result.valid) {
      if (result.code === 'RATE_LIMITED') throw new HttpError(429, 'RATE_LIMITED', result.error);
      throw unauthorized(result.error, { 'WWW-Authenticate': 'Bearer realm="svc-keys", error="invalid_token"' });
    }
    const usage = Object.fromEntries(METRICS.map((m) => [m, result.usage[m].used]));
    const limits = Object.fromEntries(METRICS.map((m) => [m, result.usage[m].limit]));
    res.json({ tier: result.identity.tier, usage, limits, resetDate: periodOf(new Date()).resetDate.toISOString() });
  });
}
