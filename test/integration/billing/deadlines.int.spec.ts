import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { DeadlineScheduler } from '../../../services/billing/deadlines.ts';
import { initialState } from '../../../services/billing/subscription.ts';
import { getSubscription, subscriptionsProjection } from '../../../services/billing/subscriptions.projection.ts';
import { createAppRuntime } from '../../../app/runtime.ts';
import type { Runtime } from '../../../services/platform/runtime.ts';
import { testConfig, testLogger } from '../../support/env.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';

describe('the deadline pass (integration)', () => {
  let rt: Runtime;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    rt = await createAppRuntime(testConfig(await useStack()), testLogger());
  });

  after(async () => {
    await rt?.mongo.db.dropDatabase().catch(() => undefined);
    await rt?.close();
  });

  it('ends every subscription whose paid period is over, even when one of them cannot be ended', async () => {
    const past = new Date(Date.now() - 60_000);
    const due = (subscriptionId: string, email: unknown) => ({
      ...initialState(),
      _id: subscriptionId,
      _v: 2,
      _pos: [],
      subscriptionId,
      status: 'cancelled',
      tier: 'pro',
      endsAt: past,
      email,
    });
    const broken = `sub-broken-${randomUUID()}`;
    const fine = `sub-fine-${randomUUID()}`;
    const collection = rt.mongo.db.collection(subscriptionsProjection.collection);
    // A record its event cannot be written from (an e-mail that is not a string), first in line.
    await collection.insertOne(due(broken, 42) as never);
    await collection.insertOne(due(fine, 'fine@example.test') as never);

    const scheduler = new DeadlineScheduler({ db: rt.mongo.db, publisher: rt.publisher, log: rt.log, intervalMs: 60_000 });
    const pass = await scheduler.runOnce();

    expect(pass).to.deep.equal({ ended: 1, failed: 1 });
    expect((await getSubscription(rt.mongo.db, fine))?.status).to.equal('ended');
    expect((await getSubscription(rt.mongo.db, broken))?.status).to.equal('cancelled');
  });
});
