import { invalid, quotaReport, type Assessment, type InvalidCode } from './assess.ts';
import { hashKey } from './key-format.ts';
import type { Tier } from '../kernel/tiers.ts';
import { TransientError } from '../../events/errors.ts';
import type { Features } from '../kernel/tiers.ts';
import type { KeyValidator, LimitDecision, Reservation, ReserveRequest, ValidationOutcome, ValidationRequest } from './validator.ts';

interface ValidateAnswer {
  valid: boolean;
  error?: string;
  code?: InvalidCode;
  tier?: Tier;
  customerId?: string;
  features?: Features;
  usage?: Record<string, { used: number }>;
  /** A team member's key: the team key whose quota it uses. */
  meteredAs?: string;
  /** A team member's own key: the member's account. */
  memberUserId?: string;
}

/** An account id as the accounts service makes them: anything else from the wire is not recorded. */
const ACCOUNT_ID = /^[A-Za-z0-9_-]{1,100}$/;

/**
 * A gate on another host asks the key-validation service ({auth_url}) over POST /validate.
 *
 * A refusal for rate is remembered for the key and client address, at most until the window the
 * service reported resets (the limit cannot admit that pair again before then) and at most 5 s (an
 * upgrade's new limit is seen within that), and repeated without asking.
 * A customer flooding past its rate then costs this gate a map lookup per request instead of a
 * call to the key service; with 6 requests in flight one customer's refusals ran at 430 a second and
 * took another customer's /validate p99 from 5.5 to 33 ms (`npm run noisy`, push attack).
 */
export class RemoteValidator implements KeyValidator {
  private readonly authUrl: string;
  private readonly timeoutMs: number;
  readonly #refused = new Map<string, { until: number; outcome: ValidationOutcome }>();

  constructor(authUrl: string, timeoutMs = 2000) {
    this.authUrl = authUrl.replace(/\/$/, '');
    this.timeoutMs = timeoutMs;
  }

  async validate(apiKey: string, request: ValidationRequest): Promise<ValidationOutcome> {
    const refusedKey = `${hashKey(apiKey)} ${request.ip}`;
    const refused = this.#refused.get(refusedKey);
    if (refused && refused.until > Date.now()) {
      const rate = refused.outcome.rate && { ...refused.outcome.rate, remaining: 0, resetAt: refused.until };
      return { ...refused.outcome, rate, repeatedRefusal: true };
    }
    if (refused) this.#refused.delete(refusedKey);
    const outcome = await this.#ask(apiKey, request);
    if (outcome.rate && !outcome.rate.allowed && outcome.rate.resetAt > Date.now()) this.#remember(refusedKey, outcome);
    return outcome;
  }

  #remember(key: string, outcome: ValidationOutcome): void {
    if (this.#refused.size >= MAX_REMEMBERED_REFUSALS) {
      const now = Date.now();
      for (const [k, v] of this.#refused) if (v.until <= now) this.#refused.delete(k);
      // Still full of live refusals: forget the oldest; it is asked about again, nothing worse.
      if (this.#refused.size >= MAX_REMEMBERED_REFUSALS) this.#refused.delete(this.#refused.keys().next().value as string);
    }
    this.#refused.set(key, { until: Math.min(outcome.rate?.resetAt ?? 0, Date.now() + MAX_REMEMBER_MS), outcome });
  }

  async #ask(apiKey: string, request: ValidationRequest): Promise<ValidationOutcome> {
    let res: Response;
    try {
      res = await fetch(`${this.authUrl}/validate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': request.ip },
        body: JSON.stringify({
          apiKey,
          ...(request.metric ? { metric: request.metric } : {}),
          ...(request.amount ? { amount: request.amount } : {}),
        }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw new TransientError(`key validation service unreachable: ${(err as Error).message}`, { cause: err });
    }
    if (res.status >= 500) throw new TransientError(`key validation service answered ${res.status}`);
    const answer = (await res.json()) as ValidateAnswer;
    const rate = rateFrom(res.headers, res.status !== 429);
    if (!answer.valid) return { result: answer.code ? invalid(answer.code) : invalid('NOT_FOUND'), rate };
    const tier = answer.tier ?? 'free';
    const used = (m: string) => answer.usage?.[m]?.used ?? 0;
    const result: Assessment = {
      valid: true,
      identity: {
        keyHash: typeof answer.meteredAs === 'string' && /^[0-9a-f]{64}$/.test(answer.meteredAs) ? answer.meteredAs : hashKey(apiKey),
        tier,
        customerId: answer.customerId ?? '',
        subscriptionId: '',
        last4: apiKey.slice(-4),
        ...(typeof answer.memberUserId === 'string' && ACCOUNT_ID.test(answer.memberUserId) ? { memberUserId: answer.memberUserId } : {}),
      },
      usage: quotaReport(tier, {
        queries: used('queries'),
        filesIndexed: used('filesIndexed'),
        screenshotsAnalyzed: used('screenshotsAnalyzed'),
      }),
      features: answer.features ?? { visionRAG: false, unlimitedIndexing: false, unlimitedQueries: false, prioritySupport: false },
    };
    return { result, rate };
  }

  async reserve(apiKey: string, request: ReserveRequest): Promise<Reservation> {
    const res = await this.#post('/reserve', { apiKey, metric: request.metric, amount: request.amount }, request.ip);
    const answer = (await res.json()) as { reserved?: boolean; reservation?: string | null; code?: InvalidCode };
    if (answer.reserved === true) return { reserved: true, reservation: answer.reservation ?? null };
    const refused = invalid(answer.code ?? 'NOT_FOUND');
    return refused.valid
      ? { reserved: false, code: 'NOT_FOUND', error: 'API key not found' }
      : { reserved: false, code: refused.code, error: refused.error };
  }

  async release(apiKey: string, reservation: string): Promise<void> {
    await this.#post('/release', { apiKey, reservation });
  }

  async #post(path: string, body: Record<string, unknown>, ip?: string): Promise<Response> {
    let res: Response;
    try {
      res = await fetch(`${this.authUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(ip ? { 'x-forwarded-for': ip } : {}) },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw new TransientError(`key validation service unreachable: ${(err as Error).message}`, { cause: err });
    }
    if (res.status >= 500) throw new TransientError(`key validation service answered ${res.status}`);
    if (res.status >= 400 && res.status !== 429) throw new Error(`key validation service refused ${path}: ${res.status}`);
    return res;
  }
}

const MAX_REMEMBERED_REFUSALS = 10_000;
const MAX_REMEMBER_MS = 5000;

function rateFrom(headers: Headers, allowed: boolean): LimitDecision | null {
  const limit = headers.get('x-ratelimit-limit');
  if (limit === null) return null;
  return {
    allowed,
    limit: Number(limit),
    remaining: Number(headers.get('x-ratelimit-remaining') ?? 0),
    // The service's instant, passed on as it is: the second it named is the one this gate names.
    resetAt: Number(headers.get('x-ratelimit-reset') ?? 0) * 1000,
  };
}
