import { ConsumerRunner } from '../../events/consumer.ts';
import { ProjectionApplier, ensureIndexes, projectionGroupId } from '../../events/projection.ts';
import type { ServiceModule } from '../platform/service.ts';
import { billingHandler } from './billing.consumer.ts';
import { DeadlineScheduler } from './deadlines.ts';
import { subscriptionsProjection } from './subscriptions.projection.ts';

/** Billing: webhooks -> subscription decider -> subscriptions.events, its projection, the deadline clock. */
export const billingService: ServiceModule = {
  name: 'billing',
  description: 'subscription state machine over payment webhooks, subscriptions projection, end-of-period deadlines',
  async start(rt) {
    const { config, mongo } = rt;
    const log = rt.log.child({ service: 'billing' });
    await ensureIndexes(mongo.db, subscriptionsProjection);
    const common = { kafka: rt.kafka, codec: rt.codec, publisher: rt.publisher, log, retries: config.kafka.handlerRetries };
    const projection = new ConsumerRunner({
      ...common,
      groupId: rt.groupId(projectionGroupId(subscriptionsProjection)),
      topics: [...new Set(subscriptionsProjection.handles.map((t) => rt.catalog.topicOf(t)))],
      handler: new ProjectionApplier(mongo.db, subscriptionsProjection),
    });
    const billing = new ConsumerRunner({
      ...common,
      groupId: rt.groupId('billing'),
      topics: [rt.catalog.topicOf('payment.webhook-received')],
      handler: billingHandler({ db: mongo.db, publisher: rt.publisher, variantTiers: config.variantTiers, log }),
    });
    const deadlines = new DeadlineScheduler({ db: mongo.db, publisher: rt.publisher, log, intervalMs: config.deadlineIntervalMs });
    await projection.start();
    await billing.start();
    deadlines.start();
    return {
      name: 'billing',
      async stop() {
        await deadlines.stop();
        await billing.stop();
        await projection.stop();
      },
    };
  },
};
