import type { RequestHandler } from 'express';
import { newEvent } from '../../events/envelope.ts';
import { clientIp } from '../platform/http/client-ip.ts';
import type { EventPublisher } from '../../events/publisher.ts';
import type { KeyIdentity } from './assess.ts';
import type { Metric } from './tiers.ts';
import { currentPeriod, type UsageIncremented } from './usage.ts';
import { setRateHeaders } from './validate.route.ts';
import type { KeyValidator } from './validator.ts';

export interface GateOptions {
  validator: KeyValidator;
  pricingUrl: string;
  /** Publishes usage.incremented for each request let through. */
  publisher: EventPublisher;
  /** The quota a gated request uses (default one query). */
  metric?: Metric;
  amount?: number;
}

/** What the gate attaches for the handler: res.locals.apiKey. */
export type GatedLocals = { apiKey: KeyIdentity };

/**
 * Premium servers put this in front of their routes: no X-API-Key -> 401; a key that does not
 * validate -> 403 (429 when it is rate limited); no visionRAG feature -> 403; otherwise the use is
 * recorded and the request goes on with the key's identity. The order is the product's.
 */
export function keyGate(options: GateOptions): RequestHandler {
  const metric = options.metric ?? 'queries';
  const amount = options.amount ?? 1;
  return async (req, res, next) => {
    const apiKey = req.get('x-api-key');
    if (!apiKey) {
      res.status(401).json({ error: 'missing X-API-Key header' });
      return;
    }
    const { result, rate } = await options.validator.validate(apiKey, { ip: clientIp(req), metric, amount });
    setRateHeaders(res, rate);
    if (!result.valid) {
      res.status(result.code === 'RATE_LIMITED' ? 429 : 403).json({ error: result.error || 'invalid API key', code: result.code, upgrade: options.pricingUrl });
      return;
    }
    if (!result.features.visionRAG) {
      res.status(403).json({ error: 'subscription required', upgrade: options.pricingUrl });
      return;
    }
    // Recorded before the work: a use that cannot be recorded (Kafka down) is not served (503).
    const usage: UsageIncremented = newEvent(
      'usage.incremented',
      { keyHash: result.identity.keyHash, metric, amount, period: currentPeriod() },
      { correlationId: (req as { id?: string }).id ?? result.identity.keyHash },
    );
    await options.publisher.publish(usage);
    (res.locals as GatedLocals).apiKey = result.identity;
    next();
  };
}
