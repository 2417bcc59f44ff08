import { Parts } from '../platform/parts.ts';
import type { ServiceModule } from '../platform/service.ts';
import { startConsumer, startProjection } from '../platform/wiring.ts';
import { billingHandler } from './billing.consumer.ts';
import { DeadlineScheduler } from './deadlines.ts';
import { lemonSqueezyProvider } from './provider-api.ts';
import { ReconciliationScheduler } from './reconciler.ts';
import { subscriptionsProjection } from './subscriptions.projection.ts';

/** Billing: webhooks -> subscription decider -> subscriptions.events, its projection, the deadline clock. */
export const billingService: ServiceModule = {
  name: 'billing',
  description:
    'subscription state machine over payment webhooks, subscriptions projection, end-of-period deadlines, nightly reconciliation with the provider',
  async start(rt) {
    const { config, mongo } = rt;
    const log = rt.log.child({ service: 'billing' });
    if (config.variantTiers.size === 0) {
      log.warn(
        'PAYMENT_VARIANT_TIERS maps no variant to a tier: every subscription webhook will be dead-lettered until it does (then `svc dlq redrive payments.webhooks`)',
      );
    }
    const parts = new Parts();
    return parts.starting(async () => {
      parts.add(await startProjection(rt, log, subscriptionsProjection));
      parts.add(
        await startConsumer(rt, log, {
          group: 'billing',
          eventTypes: ['payment.webhook-received'],
          handler: billingHandler({ db: mongo.db, publisher: rt.publisher, variantTiers: config.variantTiers, log }),
        }),
      );
      parts.add(new DeadlineScheduler({ db: mongo.db, publisher: rt.publisher, log, intervalMs: config.deadlineIntervalMs })).start();
      const { apiKey, storeId, allowTestMode, reconcileIntervalMs } = config.payments;
      if (apiKey !== null && storeId !== null) {
        parts
          .add(
            new ReconciliationScheduler({
              db: mongo.db,
              publisher: rt.publisher,
              provider: lemonSqueezyProvider({ apiKey }),
              storeId,
              variantTiers: config.variantTiers,
              scope: { storeId, allowTestMode },
              leaseMs: config.effectLeaseMs,
              intervalMs: reconcileIntervalMs,
              log,
            }),
          )
          .start();
      } else log.warn('reconciliation with the provider is off: it needs PAYMENT_API_KEY and PAYMENT_STORE_ID');
      return { name: 'billing', stop: () => parts.stopAll((err) => log.error({ err }, 'stop failed')) };
    });
  },
};
