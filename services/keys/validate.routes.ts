import type { Express, Response } from 'express';
import { clientIp } from '../platform/http/client-ip.ts';
import { HttpError, unauthorized } from '../platform/http/errors.ts';
import { METRICS, periodOf } from '../kernel/tiers.ts';
import type { UsageAnswer } from './keys-answers.ts';
import { hashKey } from './key-format.ts';
import { counted } from './metrics.ts';
import { answerOf, rateHeaders, readValidateInput } from './validate-answer.ts';
import type { KeyValidator, LimitDecision } from './validator.ts';
import type { VerificationCounts } from './verifications.ts';

export function setRateHeaders(res: Response, rate: LimitDecision | null): void {
  // setHeader, not Express's res.set: these go on every response of the hot path.
  for (const [name, value] of rateHeaders(rate)) res.setHeader(name, value);
}

/**
 * POST /validate and GET /usage: the read side every premium request depends on. POST /validate is
 * mostly answered before Express by the lean handler (validate-lean.ts), with the same answers;
 * this route serves what that one passes over (other content types, chunked or large bodies).
 */
export function mountValidationRoutes(
  app: Express,
  deps: {
    validator: KeyValidator;
    verifications?: Pick<VerificationCounts, 'read'>;
    /** The key's own facts for GET /usage (not read on POST /validate's path). */
    keyFacts?: (keyHash: string) => Promise<UsageAnswer['key'] | undefined>;
  },
): void {
  const { validator, verifications, keyFacts } = deps;

  app.post('/validate', async (req, res) => {
    const input = readValidateInput(req.body);
    const answer = input.ok
      ? answerOf(counted(await validator.validate(input.apiKey, { ip: clientIp(req), ...input.request })))
      : input.answer;
    setRateHeaders(res, answer.rate);
    res.status(answer.status).type('application/json').send(answer.body);
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
    const usage = Object.fromEntries(METRICS.map((m) => [m, result.usage[m].used])) as UsageAnswer['usage'];
    const limits = Object.fromEntries(METRICS.map((m) => [m, result.usage[m].limit])) as UsageAnswer['limits'];
    const period = periodOf(new Date());
    // The presented key's own counts and facts: a team member's key meters against its team's key (identity.keyHash).
    const keyHash = hashKey(apiKey);
    res.json({
      tier: result.identity.tier,
      usage,
      limits,
      resetDate: period.resetDate.toISOString(),
      ...(rate ? { requestsPerMinute: rate.limit } : {}),
      ...(verifications ? { verifications: await verifications.read(keyHash, period.start) } : {}),
      ...(keyFacts ? { key: await keyFacts(keyHash) } : {}),
    } satisfies UsageAnswer);
  });
}
