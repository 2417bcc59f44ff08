import { expect } from 'chai';
import { parseProviderEvent } from '../../../services/billing/provider-payload.ts';
import { reconcileSubscription, type ReconcileContext } from '../../../services/billing/reconciliation.ts';
import { decide, evolve, initialState, type SubscriptionState } from '../../../services/billing/subscription.ts';
import type { JsonObject } from '../../support/lemonsqueezy.ts';
import { recorded } from '../../support/provider-replay.ts';

/** The provider's subscription resources as its API lists them (recorded answers). */
const listed = (): JsonObject[] => [
  ...(recorded('subscriptions-page-1').data as JsonObject[]),
  ...(recorded('subscriptions-page-2').data as JsonObject[]),
];
const resource = (id: string, attributes: JsonObject = {}): JsonObject => {
  const r = listed().find((s) => s.id === id)!;
  return { ...r, attributes: { ...(r.attributes as JsonObject), ...attributes } };
};

const ctx: ReconcileContext = {
  variantTiers: new Map([
    ['301789', 'pro'],
    ['301790', 'team'],
  ]),
  scope: { storeId: '31120', allowTestMode: false },
  receivedAt: new Date('2026-11-26T01:00:00Z'),
};

/** The projection's state once the webhook a verdict records has been decided and applied. */
function applied(verdict: ReturnType<typeof reconcileSubscription>, state: SubscriptionState | null): SubscriptionState {
  if (verdict.verdict !== 'missed') throw new Error(`expected missed, got ${verdict.verdict}`);
  const parsed = parseProviderEvent(JSON.parse(verdict.webhook.body), verdict.webhook.webhookId);
  if ('error' in parsed || 'ignored' in parsed) throw new Error('the recorded webhook does not parse');
  const decided = decide({ type: 'ApplyProviderEvent', event: parsed, variantTiers: ctx.variantTiers }, state ?? initialState());
  return decided.reduce(evolve, state ?? initialState());
}

describe('reconciliation: the provider against the projection (unit)', () => {
  it('a subscription the projection lacks is missed: recorded as the subscription_updated webhook the provider would have sent', () => {
    const verdict = reconcileSubscription(resource('184231'), null, ctx);
    expect(verdict.verdict).to.equal('missed');
    if (verdict.verdict !== 'missed') return;
    expect(verdict.decided).to.deep.equal(['subscription.created']);
    expect(verdict.webhook).to.include({
      eventName: 'subscription_updated',
      subscriptionId: '184231',
      webhookId: 'reconciliation:184231:2026-11-24T08:15:02.000000Z',
      ignoredBecause: null,
    });
    const body = JSON.parse(verdict.webhook.body) as { meta: JsonObject; data: JsonObject };
    expect(body.data).to.deep.equal(resource('184231'));
    expect(body.meta).to.deep.equal({
      event_name: 'subscription_updated',
      webhook_id: 'reconciliation:184231:2026-11-24T08:15:02.000000Z',
      test_mode: false,
    });
  });

  it('the same snapshot gives the same event id on every pass; a newer snapshot another', () => {
    const first = reconcileSubscription(resource('184231'), null, ctx);
    const again = reconcileSubscription(resource('184231'), null, { ...ctx, receivedAt: new Date('2026-11-27T01:00:00Z') });
    const newer = reconcileSubscription(resource('184231', { updated_at: '2026-11-25T08:15:02.000000Z' }), null, ctx);
    if (first.verdict !== 'missed' || again.verdict !== 'missed' || newer.verdict !== 'missed') throw new Error('expected missed');
    expect(again.eventId).to.equal(first.eventId);
    expect(newer.eventId).not.to.equal(first.eventId);
  });

  it('once what was missed is applied, the next pass finds the subscription in step (a second run publishes nothing)', () => {
    const state = applied(reconcileSubscription(resource('184231'), null, ctx), null);
    expect(state).to.include({ status: 'active', tier: 'pro', subscriptionId: '184231' });
    expect(reconcileSubscription(resource('184231'), state, ctx)).to.deep.equal({ verdict: 'in-step', subscriptionId: '184231' });
  });

  it('a cancellation the webhooks missed is missed; an older snapshot than the stored one is in step', () => {
    const active = applied(reconcileSubscription(resource('184231'), null, ctx), null);
    const cancelled = resource('184231', {
      status: 'cancelled',
      cancelled: true,
      ends_at: '2026-12-24T08:15:02.000000Z',
      updated_at: '2026-11-25T09:00:00.000000Z',
    });
    const verdict = reconcileSubscription(cancelled, active, ctx);
    expect(verdict.verdict === 'missed' && verdict.decided).to.deep.equal(['subscription.cancelled']);
    const afterCancel = applied(verdict, active);
    expect(afterCancel.status).to.equal('cancelled');
    expect(reconcileSubscription(resource('184231'), afterCancel, ctx).verdict).to.equal('in-step');
  });

  it('what is over at the provider and unknown here is history: no key minted and revoked, no e-mail', () => {
    expect(reconcileSubscription(resource('183004'), null, ctx)).to.deep.equal({ verdict: 'history', subscriptionId: '183004' });
    const cancelledAndOver = resource('184231', { status: 'cancelled', cancelled: true, ends_at: '2026-11-25T00:00:00.000000Z' });
    expect(reconcileSubscription(cancelledAndOver, null, ctx).verdict).to.equal('history');
    // Still paid up until a later end: the customer is owed the key until then.
    const cancelledNotOver = resource('184231', { status: 'cancelled', cancelled: true, ends_at: '2026-12-24T08:15:02.000000Z' });
    expect(reconcileSubscription(cancelledNotOver, null, ctx).verdict).to.equal('missed');
  });

  it('an expired subscription we hold as active is missed (expired)', () => {
    const active = applied(
      reconcileSubscription(resource('183004', { status: 'active', ends_at: null, updated_at: '2026-08-02T16:40:05.000000Z' }), null, ctx),
      null,
    );
    const verdict = reconcileSubscription(resource('183004'), active, ctx);
    expect(verdict.verdict === 'missed' && verdict.decided).to.deep.equal(['subscription.expired']);
  });

  it('skips what billing would ignore from a webhook: test mode (unless allowed) and another store', () => {
    expect(reconcileSubscription(resource('184231', { test_mode: true }), null, ctx)).to.deep.equal({
      verdict: 'out-of-scope',
      subscriptionId: '184231',
      reason: 'test-mode',
    });
    expect(
      reconcileSubscription(resource('184231', { test_mode: true }), null, { ...ctx, scope: { storeId: '31120', allowTestMode: true } })
        .verdict,
    ).to.equal('missed');
    expect(reconcileSubscription(resource('184231', { store_id: 99 }), null, ctx)).to.deep.equal({
      verdict: 'out-of-scope',
      subscriptionId: '184231',
      reason: 'other-store',
    });
  });

  it('names what it cannot use and records nothing for it: an unknown variant, a snapshot without updated_at', () => {
    const unknownVariant = reconcileSubscription(resource('184231', { variant_id: 999 }), null, ctx);
    expect(unknownVariant).to.deep.equal({
      verdict: 'unusable',
      subscriptionId: '184231',
      error: 'variant 999 is not in PAYMENT_VARIANT_TIERS; refusing to guess a tier',
    });
    const noTime = { ...resource('184231'), attributes: { ...(resource('184231').attributes as JsonObject) } };
    delete (noTime.attributes as JsonObject).updated_at;
    const verdict = reconcileSubscription(noTime, null, ctx);
    expect(verdict.verdict).to.equal('unusable');
    expect(verdict.verdict === 'unusable' && verdict.error).to.match(/data\.attributes\.updated_at is required/);
  });
});
