import { expect } from 'chai';
import type { Tier } from '../../../services/platform/config.ts';
import type { SubscriptionEventData } from '../../../services/billing/events.ts';
import type { ProviderInvoice, ProviderSubscription } from '../../../services/billing/provider-event.ts';
import { UnknownVariantError, decide, effectiveTier, evolve, initialState, type SubscriptionState } from '../../../services/billing/subscription.ts';

const variantTiers: ReadonlyMap<string, Tier> = new Map([
  ['301', 'pro'],
  ['302', 'team'],
]);
const at = (iso: string) => new Date(iso);

function snapshot(eventName: ProviderSubscription['eventName'], over: Partial<ProviderSubscription> = {}): ProviderSubscription {
  return {
    kind: 'subscription',
    eventName,
    webhookId: `wh-${eventName}-${over.updatedAt?.getTime() ?? 0}`,
    subscriptionId: 'sub-1',
    customerId: 'cus-1',
    userId: 'user-1',
    email: 'ada@example.com',
    name: 'Ada',
    variantId: '301',
    status: 'active',
    renewsAt: at('2026-12-21T10:00:00Z'),
    endsAt: null,
    updatedAt: at('2026-11-21T10:00:00Z'),
    customerPortalUrl: 'https://portal.example/ada',
    updatePaymentUrl: 'https://portal.example/ada/payment',
    ...over,
  };
}

function invoice(eventName: ProviderInvoice['eventName'], over: Partial<ProviderInvoice> = {}): ProviderInvoice {
  return {
    kind: 'invoice',
    eventName,
    webhookId: `wh-inv-${eventName}`,
    invoiceId: 'inv-1',
    subscriptionId: 'sub-1',
    customerId: 'cus-1',
    userId: null,
    email: 'ada@example.com',
    name: 'Ada',
    status: eventName === 'subscription_payment_success' ? 'paid' : 'failed',
    updatedAt: at('2026-12-21T10:05:00Z'),
    ...over,
  };
}

/** given: events already applied; when: a command; then: the events decided. */
function given(...events: SubscriptionEventData[]): SubscriptionState {
  return events.reduce(evolve, initialState());
}
const apply = (event: ProviderSubscription | ProviderInvoice, state: SubscriptionState) =>
  decide({ type: 'ApplyProviderEvent', event, variantTiers }, state);
const types = (events: SubscriptionEventData[]) => events.map((e) => e.type);

describe('subscription decider (unit)', () => {
  const created = () => apply(snapshot('subscription_created'), initialState());

  it('created: an active subscription with the tier of its variant', () => {
    const events = created();
    expect(types(events)).to.deep.equal(['subscription.created']);
    expect(events[0]!.data).to.include({ subscriptionId: 'sub-1', tier: 'pro', status: 'active', email: 'ada@example.com', userId: 'user-1' });
    expect(effectiveTier(given(...events))).to.equal('pro');
  });

  it('created with an unknown variant: a clear error, never a silent free', () => {
    expect(() => apply(snapshot('subscription_created', { variantId: '999' }), initialState())).to.throw(UnknownVariantError, /variant 999/);
  });

  it('the same delivery twice has one effect', () => {
    const state = given(...created());
    expect(apply(snapshot('subscription_created'), state)).to.deep.equal([]);
  });

  it('updated: syncs status, tier, renews_at and ends_at', () => {
    const state = given(...created());
    const events = apply(snapshot('subscription_updated', { variantId: '302', renewsAt: at('2027-01-21T10:00:00Z'), updatedAt: at('2026-11-22T10:00:00Z') }), state);
    expect(types(events)).to.deep.equal(['subscription.updated']);
    expect(events[0]!.data).to.include({ tier: 'team', status: 'active' });
    expect(effectiveTier(given(...created(), ...events))).to.equal('team');
  });

  it('an event older than the last applied changes nothing', () => {
    const state = given(...created(), ...apply(snapshot('subscription_updated', { variantId: '302', updatedAt: at('2026-11-23T00:00:00Z') }), given(...created())));
    const stale = apply(snapshot('subscription_updated', { variantId: '301', updatedAt: at('2026-11-22T00:00:00Z') }), state);
    expect(stale).to.deep.equal([]);
  });

  const cancelledAt = at('2026-11-25T10:00:00Z');
  const endsAt = at('2026-12-21T10:00:00Z');
  const cancel = (state: SubscriptionState) =>
    apply(snapshot('subscription_cancelled', { status: 'cancelled', endsAt, renewsAt: null, updatedAt: cancelledAt }), state);

  it('cancelled: status cancelled, the tier stays until ends_at', () => {
    const events = cancel(given(...created()));
    expect(types(events)).to.deep.equal(['subscription.cancelled', 'subscription.updated']);
    expect(events[0]!.data).to.include({ endsAt, reactivateUrl: 'https://portal.example/ada', email: 'ada@example.com' });
    const state = given(...created(), ...events);
    expect(state.status).to.equal('cancelled');
    expect(effectiveTier(state)).to.equal('pro');
  });

  it('a subscription_updated saying cancelled is the same cancellation (no second e-mail from the later cancelled webhook)', () => {
    const viaUpdate = apply(snapshot('subscription_updated', { status: 'cancelled', endsAt, renewsAt: null, updatedAt: cancelledAt }), given(...created()));
    expect(types(viaUpdate)).to.include('subscription.cancelled');
    expect(cancel(given(...created(), ...viaUpdate))).to.deep.equal([]);
  });

  it('the deadline: nothing before ends_at, then subscription.ended and the tier falls to free', () => {
    const state = given(...created(), ...cancel(given(...created())));
    expect(decide({ type: 'EnforceDeadline', now: at('2026-12-21T09:59:59Z') }, state)).to.deep.equal([]);
    const ended = decide({ type: 'EnforceDeadline', now: endsAt }, state);
    expect(types(ended)).to.deep.equal(['subscription.ended']);
    expect(ended[0]!.data).to.include({ subscriptionId: 'sub-1', endsAt, email: 'ada@example.com' });
    const after = given(...created(), ...cancel(given(...created())), ...ended);
    expect(effectiveTier(after)).to.equal('free');
    expect(decide({ type: 'EnforceDeadline', now: at('2027-01-01T00:00:00Z') }, after)).to.deep.equal([]);
  });

  it('the deadline leaves active subscriptions alone', () => {
    expect(decide({ type: 'EnforceDeadline', now: at('2030-01-01T00:00:00Z') }, given(...created()))).to.deep.equal([]);
  });

  it('resumed: back to active with its tier', () => {
    const cancelled = given(...created(), ...cancel(given(...created())));
    const events = apply(snapshot('subscription_resumed', { status: 'active', updatedAt: at('2026-11-26T10:00:00Z') }), cancelled);
    expect(types(events)[0]).to.equal('subscription.resumed');
    const state = given(...created(), ...cancel(given(...created())), ...events);
    expect(state.status).to.equal('active');
    expect(state.endsAt).to.equal(null);
    expect(effectiveTier(state)).to.equal('pro');
    expect(decide({ type: 'EnforceDeadline', now: at('2030-01-01T00:00:00Z') }, state)).to.deep.equal([]);
  });

  it('expired: ended now, tier free', () => {
    const events = apply(snapshot('subscription_expired', { status: 'expired', endsAt, updatedAt: at('2026-12-21T10:00:01Z') }), given(...created()));
    expect(types(events)).to.deep.equal(['subscription.expired']);
    expect(effectiveTier(given(...created(), ...events))).to.equal('free');
  });

  it('payment_failed: past_due with access kept and the update link; payment_success clears it', () => {
    const failed = apply(invoice('subscription_payment_failed'), given(...created()));
    expect(types(failed)).to.deep.equal(['subscription.payment-failed']);
    expect(failed[0]!.data).to.include({ invoiceId: 'inv-1', email: 'ada@example.com', updatePaymentUrl: 'https://portal.example/ada/payment' });
    const pastDue = given(...created(), ...failed);
    expect(pastDue.status).to.equal('past_due');
    expect(effectiveTier(pastDue)).to.equal('pro');
    const paid = apply(invoice('subscription_payment_success', { invoiceId: 'inv-2' }), pastDue);
    expect(types(paid)).to.deep.equal(['subscription.payment-succeeded']);
    expect(given(...created(), ...failed, ...paid).status).to.equal('active');
  });

  it('a repeated invoice webhook has one effect', () => {
    const state = given(...created(), ...apply(invoice('subscription_payment_failed'), given(...created())));
    expect(apply(invoice('subscription_payment_failed'), state)).to.deep.equal([]);
  });

  it('an invoice for a subscription not seen yet changes nothing', () => {
    expect(apply(invoice('subscription_payment_success'), initialState())).to.deep.equal([]);
  });

  it('a subscription first seen through its cancellation is created, then cancelled', () => {
    const events = apply(snapshot('subscription_cancelled', { status: 'cancelled', endsAt, updatedAt: cancelledAt }), initialState());
    expect(types(events).slice(0, 2)).to.deep.equal(['subscription.created', 'subscription.cancelled']);
  });

  describe('ended by our own deadline, then the provider speaks again', () => {
    const ended = () => {
      const history = [...created(), ...cancel(given(...created()))];
      return [...history, ...decide({ type: 'EnforceDeadline', now: endsAt }, given(...history))];
    };

    it('a newer resume brings the paying customer back to their tier', () => {
      const resumedAt = at('2026-12-21T10:00:05Z');
      const events = apply(snapshot('subscription_resumed', { status: 'active', renewsAt: at('2027-01-21T10:00:00Z'), updatedAt: resumedAt }), given(...ended()));
      expect(types(events)[0]).to.equal('subscription.resumed');
      const state = given(...ended(), ...events);
      expect(state.status).to.equal('active');
      expect(effectiveTier(state)).to.equal('pro');
    });

    it('a resume the customer made before the end but delivered late is newer than the cancellation, so it applies', () => {
      const events = apply(snapshot('subscription_resumed', { status: 'active', updatedAt: at('2026-12-01T00:00:00Z') }), given(...ended()));
      expect(effectiveTier(given(...ended(), ...events))).to.equal('pro');
    });

    it('the same cancellation delivered again changes nothing', () => {
      expect(cancel(given(...ended()))).to.deep.equal([]);
    });

    it('a newer snapshot of the same cancellation (same end) does not reopen it', () => {
      const again = apply(snapshot('subscription_updated', { status: 'cancelled', endsAt, renewsAt: null, updatedAt: at('2026-12-22T00:00:00Z') }), given(...ended()));
      expect(types(again)).to.not.include('subscription.resumed');
      expect(effectiveTier(given(...ended(), ...again))).to.equal('free');
    });

    it('a newer cancellation of a later period reopens it until that period ends', () => {
      const later = at('2027-01-21T10:00:00Z');
      const events = apply(snapshot('subscription_cancelled', { status: 'cancelled', endsAt: later, renewsAt: null, updatedAt: at('2026-12-30T00:00:00Z') }), given(...ended()));
      expect(types(events).slice(0, 2)).to.deep.equal(['subscription.resumed', 'subscription.cancelled']);
      const state = given(...ended(), ...events);
      expect(state).to.include({ status: 'cancelled' });
      expect(state.endsAt).to.deep.equal(later);
      expect(effectiveTier(state)).to.equal('pro');
    });

    it('an older snapshot changes nothing', () => {
      expect(apply(snapshot('subscription_updated', { status: 'active', updatedAt: at('2026-11-24T00:00:00Z') }), given(...ended()))).to.deep.equal([]);
    });
  });
});
