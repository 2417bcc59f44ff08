import { expect } from 'chai';
import { ignoredBecause } from '../../../services/billing/webhook-scope.ts';
import { fixture, subscriptionPayload } from '../../support/lemonsqueezy.ts';

describe('webhook scope: test mode and store (unit)', () => {
  const live = (store: number | string | undefined) =>
    subscriptionPayload('subscription_created', { meta: { test_mode: false }, attributes: { test_mode: false, store_id: store } });

  it('ignores a test-mode event unless test mode is allowed', () => {
    const sample = fixture('subscription_created').json;
    expect(ignoredBecause(sample, { storeId: null, allowTestMode: false })).to.equal('test-mode');
    expect(ignoredBecause(sample, { storeId: null, allowTestMode: true })).to.equal(null);
  });

  it('counts test mode when either meta.test_mode or attributes.test_mode says so', () => {
    const scope = { storeId: null, allowTestMode: false };
    expect(
      ignoredBecause(subscriptionPayload('subscription_created', { meta: { test_mode: false }, attributes: { test_mode: true } }), scope),
    ).to.equal('test-mode');
    expect(
      ignoredBecause(subscriptionPayload('subscription_created', { meta: { test_mode: true }, attributes: { test_mode: false } }), scope),
    ).to.equal('test-mode');
    expect(ignoredBecause(live(31120), scope)).to.equal(null);
  });

  it('with a store configured, ignores another store and an event without a store id; numeric and string ids compare alike', () => {
    const scope = { storeId: '31120', allowTestMode: false };
    expect(ignoredBecause(live(31120), scope)).to.equal(null);
    expect(ignoredBecause(live('31120'), scope)).to.equal(null);
    expect(ignoredBecause(live(31121), scope)).to.equal('other-store');
    expect(ignoredBecause(live(undefined), scope)).to.equal('other-store');
  });

  it('without a store configured, checks no store', () => {
    expect(ignoredBecause(live(999), { storeId: null, allowTestMode: false })).to.equal(null);
  });

  it('leaves what is not a JSON object to billing (which dead-letters it)', () => {
    for (const body of [null, 'text', 42, [], undefined])
      expect(ignoredBecause(body, { storeId: '1', allowTestMode: false })).to.equal(null);
  });
});
