import { expect } from 'chai';
import type { Tier } from '../../../services/kernel/tiers.ts';
import type { ProviderInvoice, ProviderSubscription } from '../../../services/billing/provider-event.ts';
import { UnknownVariantError, effectiveTier, subscriptionDecider, type BillingCommand } from '../../../services/billing/subscription.ts';
import { deciderSpec } from '../../support/decider.ts';

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

const { given } = deciderSpec(subscriptionDecider);
/** The commands: a provider webhook, or our own clock reaching a deadline. */
const webhook = (event: ProviderSubscription | ProviderInvoice): BillingCommand => ({ type: 'ApplyProviderEvent', event, variantTiers });
const clock = (now: Date): BillingCommand => ({ type: 'EnforceDeadline', now });

describe('subscription decider (unit)', () => {
  const created = given()
    .when(webhook(snapshot('subscription_created')))
    .thenTypes('subscription.created');
  const cancelledAt = at('2026-11-25T10:00:00Z');
  const endsAt = at('2026-12-21T10:00:00Z');
  const cancellation = snapshot('subscription_cancelled', { status: 'cancelled', endsAt, renewsAt: null, updatedAt: cancelledAt });
  const cancelled = given(...created)
    .when(webhook(cancellation))
    .thenTypes('subscription.cancelled', 'subscription.updated');
  const ended = given(...created, ...cancelled)
    .when(clock(endsAt))
    .thenTypes('subscription.ended');

  it('created: an active subscription with the tier of its variant', () => {
    expect(created[0]!.data).to.include({
      subscriptionId: 'sub-1',
      tier: 'pro',
      status: 'active',
      email: 'ada@example.com',
      userId: 'user-1',
    });
    expect(effectiveTier(given(...created).state())).to.equal('pro');
  });

  it('created with an unknown variant: a clear error, never a silent free', () => {
    given()
      .when(webhook(snapshot('subscription_created', { variantId: '999' })))
      .thenThrows(UnknownVariantError, /variant 999/);
  });

  it('the same delivery twice has one effect', () => {
    given(...created)
      .when(webhook(snapshot('subscription_created')))
      .thenNothing();
  });

  it('updated: syncs status, tier, renews_at and ends_at', () => {
    const when = given(...created).when(
      webhook(
        snapshot('subscription_updated', { variantId: '302', renewsAt: at('2027-01-21T10:00:00Z'), updatedAt: at('2026-11-22T10:00:00Z') }),
      ),
    );
    expect(when.thenTypes('subscription.updated')[0]!.data).to.include({ tier: 'team', status: 'active' });
    expect(effectiveTier(when.thenState())).to.equal('team');
  });

  it('an event older than the last applied changes nothing', () => {
    const team = given(...created)
      .when(webhook(snapshot('subscription_updated', { variantId: '302', updatedAt: at('2026-11-23T00:00:00Z') })))
      .thenTypes('subscription.updated');
    given(...created, ...team)
      .when(webhook(snapshot('subscription_updated', { variantId: '301', updatedAt: at('2026-11-22T00:00:00Z') })))
      .thenNothing();
  });

  it('cancelled: status cancelled, the tier stays until ends_at', () => {
    expect(cancelled[0]!.data).to.include({ endsAt, reactivateUrl: 'https://portal.example/ada', email: 'ada@example.com' });
    const state = given(...created, ...cancelled).state();
    expect(state.status).to.equal('cancelled');
    expect(effectiveTier(state)).to.equal('pro');
  });

  it('a subscription_updated saying cancelled is the same cancellation (no second e-mail from the later cancelled webhook)', () => {
    const viaUpdate = given(...created)
      .when(webhook(snapshot('subscription_updated', { status: 'cancelled', endsAt, renewsAt: null, updatedAt: cancelledAt })))
      .thenTypes('subscription.cancelled', 'subscription.updated');
    given(...created, ...viaUpdate)
      .when(webhook(cancellation))
      .thenNothing();
  });

  it('the deadline: nothing before ends_at, then subscription.ended and the tier falls to free', () => {
    given(...created, ...cancelled)
      .when(clock(at('2026-12-21T09:59:59Z')))
      .thenNothing();
    expect(ended[0]!.data).to.include({ subscriptionId: 'sub-1', endsAt, email: 'ada@example.com' });
    expect(effectiveTier(given(...created, ...cancelled, ...ended).state())).to.equal('free');
    given(...created, ...cancelled, ...ended)
      .when(clock(at('2027-01-01T00:00:00Z')))
      .thenNothing();
  });

  it('the deadline leaves active subscriptions alone', () => {
    given(...created)
      .when(clock(at('2030-01-01T00:00:00Z')))
      .thenNothing();
  });

  it('resumed: back to active with its tier', () => {
    const when = given(...created, ...cancelled).when(
      webhook(snapshot('subscription_resumed', { status: 'active', updatedAt: at('2026-11-26T10:00:00Z') })),
    );
    const resumed = when.thenTypes('subscription.resumed');
    const state = when.thenState();
    expect(state.status).to.equal('active');
    expect(state.endsAt).to.equal(null);
    expect(effectiveTier(state)).to.equal('pro');
    given(...created, ...cancelled, ...resumed)
      .when(clock(at('2030-01-01T00:00:00Z')))
      .thenNothing();
  });

  it('expired: ended now, tier free', () => {
    const when = given(...created).when(
      webhook(snapshot('subscription_expired', { status: 'expired', endsAt, updatedAt: at('2026-12-21T10:00:01Z') })),
    );
    when.thenTypes('subscription.expired');
    expect(effectiveTier(when.thenState())).to.equal('free');
  });

  it('payment_failed: past_due with access kept and the update link; payment_success clears it', () => {
    const failed = given(...created)
      .when(webhook(invoice('subscription_payment_failed')))
      .thenTypes('subscription.payment-failed');
    expect(failed[0]!.data).to.include({
      invoiceId: 'inv-1',
      email: 'ada@example.com',
      updatePaymentUrl: 'https://portal.example/ada/payment',
    });
    const pastDue = given(...created, ...failed).state();
    expect(pastDue.status).to.equal('past_due');
    expect(effectiveTier(pastDue)).to.equal('pro');
    const paid = given(...created, ...failed).when(webhook(invoice('subscription_payment_success', { invoiceId: 'inv-2' })));
    paid.thenTypes('subscription.payment-succeeded');
    expect(paid.thenState().status).to.equal('active');
  });

  it('a repeated invoice webhook has one effect', () => {
    const failed = given(...created)
      .when(webhook(invoice('subscription_payment_failed')))
      .thenTypes('subscription.payment-failed');
    given(...created, ...failed)
      .when(webhook(invoice('subscription_payment_failed')))
      .thenNothing();
  });

  it('an invoice for a subscription not seen yet changes nothing', () => {
    given()
      .when(webhook(invoice('subscription_payment_success')))
      .thenNothing();
  });

  it('a subscription first seen through its cancellation is created, then cancelled', () => {
    const events = given().when(webhook(cancellation)).thenTypes('subscription.created', 'subscription.cancelled');
    expect(events[0]!.data).to.include({ status: 'active' });
  });

  describe('ended by our own deadline, then the provider speaks again', () => {
    const history = () => [...created, ...cancelled, ...ended];

    it('a newer resume brings the paying customer back to their tier', () => {
      const when = given(...history()).when(
        webhook(
          snapshot('subscription_resumed', {
            status: 'active',
            renewsAt: at('2027-01-21T10:00:00Z'),
            updatedAt: at('2026-12-21T10:00:05Z'),
          }),
        ),
      );
      when.thenTypes('subscription.resumed');
      expect(when.thenState().status).to.equal('active');
      expect(effectiveTier(when.thenState())).to.equal('pro');
    });

    it('a resume the customer made before the end but delivered late is newer than the cancellation, so it applies', () => {
      const when = given(...history()).when(
        webhook(snapshot('subscription_resumed', { status: 'active', updatedAt: at('2026-12-01T00:00:00Z') })),
      );
      expect(effectiveTier(when.thenState())).to.equal('pro');
    });

    it('the same cancellation delivered again changes nothing', () => {
      given(...history())
        .when(webhook(cancellation))
        .thenNothing();
    });

    it('a newer snapshot of the same cancellation (same end) does not reopen it', () => {
      const when = given(...history()).when(
        webhook(snapshot('subscription_updated', { status: 'cancelled', endsAt, renewsAt: null, updatedAt: at('2026-12-22T00:00:00Z') })),
      );
      expect(when.thenState().status).to.equal('ended');
      expect(effectiveTier(when.thenState())).to.equal('free');
    });

    it('a newer cancellation of a later period reopens it until that period ends', () => {
      const later = at('2027-01-21T10:00:00Z');
      const when = given(...history()).when(
        webhook(
          snapshot('subscription_cancelled', { status: 'cancelled', endsAt: later, renewsAt: null, updatedAt: at('2026-12-30T00:00:00Z') }),
        ),
      );
      when.thenTypes('subscription.resumed', 'subscription.cancelled');
      const state = when.thenState();
      expect(state.status).to.equal('cancelled');
      expect(state.endsAt).to.deep.equal(later);
      expect(effectiveTier(state)).to.equal('pro');
    });

    it('an older snapshot changes nothing', () => {
      given(...history())
        .when(webhook(snapshot('subscription_updated', { status: 'active', updatedAt: at('2026-11-24T00:00:00Z') })))
        .thenNothing();
    });
  });
});
