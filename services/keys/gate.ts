import type { Request, RequestHandler, Response } from 'express';
import { newEvent } from '../../events/envelope.ts';
import type { EventPublisher } from '../../events/publisher.ts';
import { clientIp } from '../platform/http/client-ip.ts';
import { HttpError } from '../platform/http/errors.ts';
import { INVALID_MESSAGES, type KeyIdentity, type QuotaReport } from './assess.ts';
import type { Metric } from '../kernel/tiers.ts';
import { currentPeriod, type UsageIncremented } from './usage.ts';
import { setRateHeaders } from './validate.routes.ts';
import type { KeyValidator } from './validator.ts';

export interface GateOptions {
  validator: KeyValidator;
  pricingUrl: string;
  /** Publishes usage.incremented for each metered request let through. */
  publisher: Pick<EventPublisher, 'publish'>;
  /** The quota a gated request uses (default one query). */
  metric?: Metric;
  amount?: number;
  /** Shapes every refusal's body (a service's own error format); default as is. */
  errorBody?: (body: GateRefusal) => Record<string, unknown>;
}

export interface GateRefusal {
  error: string;
  code?: string;
  upgrade?: string;
}

/** What the gate attaches for the handler: res.locals.apiKey. */
export type GatedLocals = { apiKey: KeyIdentity };

export interface UseRequest {
  metric: Metric;
  /** How much of the quota the request would use; 0 checks the key and meters nothing. */
  amount: number;
  /** Record the use now (default); false when the work itself records what it really used (indexing). */
  meter?: boolean;
}

/** Quota held for a use about to be recorded; release() when the use is not served after all. */
export interface QuotaHold {
  release(): Promise<void>;
}

/** A key let through: who it is, and its quotas as of this request. */
export interface Admitted {
  identity: KeyIdentity;
  usage: QuotaReport;
  /**
   * Holds quota for a use of this key before it is recorded, so concurrent requests cannot pass
   * the quota together: null when there is no room (the caller answers 403 USAGE_EXCEEDED).
   */
  reserve(metric: Metric, amount: number): Promise<QuotaHold | null>;
}

const NOTHING_HELD: QuotaHold = { release: () => Promise.resolve() };

/**
 * A client that comes back before its Retry-After is answered its 429 after HOLD_BACK_MS, so a
 * client looping on refusals sends a few a second per connection instead of thousands, each of which
 * takes a turn of the loop that serves every customer (3000 a second from 6 connections in
 * `npm run noisy`). At most MAX_HELD answers wait at once per process; past that they go at once.
 */
const HOLD_BACK_MS = 250;
const MAX_HELD = 1000;
let held = 0;

async function holdBack(res: Response, ms: number): Promise<void> {
  if (ms <= 0 || held >= MAX_HELD) return;
  held++;
  try {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        res.off('close', done);
        resolve();
      }
      res.once('close', done);
    });
  } finally {
    held--;
  }
}

const KEY_IN_BEARER = /^Bearer\s+(svc_\S+)\s*$/i;

/**
 * The key a request presents: `X-API-Key`, or `Authorization: Bearer svc_…` (browsers' CORS
 * preflights allow only a few headers, Authorization among them).
 */
export function presentedKey(req: Request): string | undefined {
  return req.get('x-api-key') || KEY_IN_BEARER.exec(req.get('authorization') ?? '')?.[1];
}

/**
 * Premium servers put this in front of their routes: no key -> 401; a key that does not validate ->
 * 403 (429 when it is rate limited, 403 USAGE_EXCEEDED when the use would pass the quota); no
 * visionRAG feature -> 403 "subscription required"; otherwise the use is recorded and the request
 * goes on with the key's identity. The order is the product's.
 */
export class KeyGate {
  readonly #options: GateOptions;

  constructor(options: GateOptions) {
    this.#options = options;
  }

  /**
   * Checks the request's key for this use. Answers the refusal itself and returns null, or returns
   * the key's identity (also in res.locals.apiKey) once the use is recorded.
   */
  async authorize(
    req: Request,
    res: Response,
    use: UseRequest,
    presented: string | undefined = presentedKey(req),
  ): Promise<Admitted | null> {
    const refuse = (status: number, body: GateRefusal) => {
      res.status(status).json(this.#options.errorBody?.(body) ?? body);
      return null;
    };
    // `presented`: the request's own key, or the key an OAuth access token stands for (the MCP face).
    const apiKey = presented;
    if (!apiKey) return refuse(401, { error: 'missing API key (X-API-Key header or Authorization: Bearer svc_…)', code: 'UNAUTHORIZED' });
    const ip = clientIp(req);
    const { result, rate, repeatedRefusal } = await this.#options.validator.validate(apiKey, {
      ip,
      metric: use.metric,
      amount: Math.max(use.amount, 0),
    });
    setRateHeaders(res, rate);
    if (repeatedRefusal && rate) await holdBack(res, Math.min(Math.max(rate.resetAt - Date.now(), 0), HOLD_BACK_MS));
    if (!result.valid) {
      return refuse(result.code === 'RATE_LIMITED' ? 429 : 403, {
        error: result.error || 'invalid API key',
        code: result.code,
        upgrade: this.#options.pricingUrl,
      });
    }
    if (!result.features.visionRAG)
      return refuse(403, { error: 'subscription required', code: 'SUBSCRIPTION_REQUIRED', upgrade: this.#options.pricingUrl });
    const { usage } = result;
    const reserve = async (metric: Metric, amount: number): Promise<QuotaHold | null> => {
      // Unlimited quotas (every tier with visionRAG today) cannot be passed: nothing to hold.
      if (amount <= 0 || usage[metric].limit === -1) return NOTHING_HELD;
      const held = await this.#options.validator.reserve(apiKey, { ip, metric, amount });
      if (!held.reserved) {
        if (held.code === 'USAGE_EXCEEDED') return null;
        throw new HttpError(held.code === 'RATE_LIMITED' ? 429 : 403, held.code, held.error, {
          details: { upgrade: this.#options.pricingUrl },
        });
      }
      const { reservation } = held;
      return reservation === null ? NOTHING_HELD : { release: () => this.#options.validator.release(apiKey, reservation) };
    };
    if (use.amount > 0 && use.meter !== false) {
      const hold = await reserve(use.metric, use.amount);
      if (!hold) return refuse(403, { error: INVALID_MESSAGES.USAGE_EXCEEDED, code: 'USAGE_EXCEEDED', upgrade: this.#options.pricingUrl });
      // Recorded before the work: a use that cannot be recorded (Kafka down) is not served (503).
      const event: UsageIncremented = newEvent(
        'usage.incremented',
        { keyHash: result.identity.keyHash, metric: use.metric, amount: use.amount, period: currentPeriod() },
        { correlationId: (req as { id?: string }).id ?? result.identity.keyHash },
      );
      try {
        await this.#options.publisher.publish(event);
      } catch (err) {
        await hold.release().catch(() => undefined);
        throw err;
      }
    }
    (res.locals as GatedLocals).apiKey = result.identity;
    return { identity: result.identity, usage, reserve };
  }

  /** The gate as middleware, for routes whose use is fixed (GateOptions' metric and amount). */
  middleware(use: UseRequest = { metric: this.#options.metric ?? 'queries', amount: this.#options.amount ?? 1 }): RequestHandler {
    return async (req, res, next) => {
      if (await this.authorize(req, res, use)) next();
    };
  }
}

/** The gate as middleware with one fixed use per request (one query unless told otherwise). */
export function keyGate(options: GateOptions): RequestHandler {
  return new KeyGate(options).middleware();
}
