import { newEvent } from '../../events/envelope.ts';
import type { EventPublisher } from '../../events/publisher.ts';
import { INVALID_MESSAGES } from '../keys/assess.ts';
import type { Metric } from '../kernel/tiers.ts';
import { currentPeriod, type UsageIncremented } from '../keys/usage.ts';
import { ragError, type Caller } from './caller.ts';

/** What metering reads of a face's dependencies (the retrieval and the vision operations both meter). */
export interface MeterDeps {
  config: { urls: { pricing: string } };
}

/** Refuses a use that would pass the caller's monthly quota: 403 USAGE_EXCEEDED, with where to upgrade. */
export function checkQuota(deps: MeterDeps, caller: Caller, metric: Metric, amount: number): void {
  const room = caller.usage?.[metric];
  if (!room || room.limit === -1 || room.used + amount <= room.limit) return;
  throw ragError(403, 'USAGE_EXCEEDED', INVALID_MESSAGES.USAGE_EXCEEDED, { upgrade: deps.config.urls.pricing });
}

/**
 * Checks the quota, holds it (so concurrent requests cannot pass it together) and records the use
 * (usage.incremented) before the work, as the gate does for other premium routes: a use that cannot
 * be recorded (Kafka down) is not served, and gives its hold back. The same for every face (HTTP,
 * MCP); operators, who have no key, are not metered.
 */
export async function meter(
  deps: MeterDeps & { usagePublisher: Pick<EventPublisher, 'publish'> },
  caller: Caller,
  metric: Metric,
  amount: number,
  correlationId: string,
): Promise<void> {
  if (!caller.keyHash || amount <= 0) return;
  checkQuota(deps, caller, metric, amount);
  const hold = caller.reserve ? await caller.reserve(metric, amount) : undefined;
  if (hold === null) throw ragError(403, 'USAGE_EXCEEDED', INVALID_MESSAGES.USAGE_EXCEEDED, { upgrade: deps.config.urls.pricing });
  const usage: UsageIncremented = newEvent(
    'usage.incremented',
    { keyHash: caller.keyHash, metric, amount, period: currentPeriod() },
    { correlationId },
  );
  try {
    await deps.usagePublisher.publish(usage);
  } catch (err) {
    await hold?.release().catch(() => undefined);
    throw err;
  }
}
