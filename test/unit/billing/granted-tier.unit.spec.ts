import { expect } from 'chai';
import { grantedTier } from '../../../services/billing/granted-tier.ts';
import { SUBSCRIPTION_EVENT_TYPES } from '../../../services/billing/events.ts';
import { effectiveTier, initialState } from '../../../services/billing/subscription.ts';
import { keysProjection } from '../../../services/keys/keys.projection.ts';
import { usersProjection } from '../../../services/accounts/users.projection.ts';
import { newEvent } from '../../../events/envelope.ts';

describe('what a subscription grants: one rule (unit)', () => {
  it('the paid tier while it runs, past due, paused or cancelled; free before it exists and once it ended', () => {
    for (const status of ['active', 'past_due', 'paused', 'cancelled'] as const)
      expect(grantedTier(status, 'team'), status).to.equal('team');
    expect(grantedTier('ended', 'team')).to.equal('free');
    expect(grantedTier('none', 'pro')).to.equal('free');
  });

  it('the subscription state, its key and its account all follow it', () => {
    const subscriptionId = 'sub-granted';
    const base = { subscriptionId, userId: 'user-granted', providerUpdatedAt: new Date('2026-11-01T00:00:00Z') };
    const created = newEvent('subscription.created', {
      ...base,
      customerId: 'cus',
      email: 'a@example.test',
      name: null,
      variantId: '1',
      tier: 'team' as const,
      status: 'past_due' as const,
      renewsAt: null,
      endsAt: null,
      customerPortalUrl: null,
      updatePaymentUrl: null,
    });
    const ended = newEvent('subscription.ended', {
      subscriptionId,
      userId: 'user-granted',
      endsAt: new Date('2026-12-01T00:00:00Z'),
      email: 'a@example.test',
      name: null,
    });
    const key = keysProjection.evolve(null, created);
    const user = usersProjection.evolve(null, created);
    expect([effectiveTier({ status: 'past_due', tier: 'team' }), key?.tier, user?.tier]).to.deep.equal(['team', 'team', 'team']);
    expect([
      effectiveTier({ status: 'ended', tier: 'team' }),
      keysProjection.evolve(key, ended)?.tier,
      usersProjection.evolve(user, ended)?.tier,
    ]).to.deep.equal(['free', 'free', 'free']);
    expect(effectiveTier(initialState())).to.equal('free');
    expect(SUBSCRIPTION_EVENT_TYPES).to.include('subscription.ended');
  });
});
