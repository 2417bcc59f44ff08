import { expect } from 'chai';
import { checkoutGap, variantOf } from '../../../services/billing/checkout.routes.ts';
import { MONTHLY_PRICE_USD } from '../../../services/billing/pricing/prices.ts';
import { renderPricingPage } from '../../../services/billing/pricing/pricing.page.ts';
import type { PaymentProvider } from '../../../services/billing/provider-api.ts';
import { TIERS, limitsOf, type Tier } from '../../../services/kernel/tiers.ts';

const provider: PaymentProvider = {
  createCheckout: () => Promise.reject(new Error('not called')),
  listSubscriptions: () => Promise.reject(new Error('not called')),
};
const variantTiers = new Map<string, Tier>([
  ['301789', 'pro'],
  ['301791', 'pro'],
  ['301790', 'team'],
]);

describe('checkout configuration and the pricing page (unit)', () => {
  it('checkoutGap names the variable that is missing; variantOf takes the first variant listed for a tier', () => {
    expect(checkoutGap({ provider: null, storeId: '31120', variantTiers })).to.match(/PAYMENT_API_KEY is unset/);
    expect(checkoutGap({ provider, storeId: null, variantTiers })).to.match(/PAYMENT_STORE_ID is unset/);
    expect(checkoutGap({ provider, storeId: '31120', variantTiers: new Map([['301789', 'pro']]) }, 'team')).to.equal(
      'no variant sells the team tier here (PAYMENT_VARIANT_TIERS)',
    );
    expect(checkoutGap({ provider, storeId: '31120', variantTiers }, 'team')).to.equal(null);
    expect(variantOf(variantTiers, 'pro')).to.equal('301789');
    expect(variantOf(variantTiers, 'free')).to.equal(null);
  });

  it('shows the three tiers with their prices and the limits of the kernel tier table', () => {
    const html = renderPricingPage({ gapOf: () => null });
    for (const tier of TIERS) {
      const card = new RegExp(`<section class="tier" data-tier="${tier}">([\\s\\S]*?)</section>`).exec(html)?.[1] ?? '';
      expect(card, tier).to.include(`$${MONTHLY_PRICE_USD[tier]}</span> a month`);
      expect(card, tier).to.include(`${limitsOf(tier).requestsPerMinute.toLocaleString('en-US')} requests a minute`);
      const queries = limitsOf(tier).quotas.queries;
      expect(card, tier).to.include(`${queries === -1 ? 'unlimited' : queries.toLocaleString('en-US')} code queries a month`);
    }
    expect(html).to.include('<button type="submit" form="subscribe" name="tier" value="pro">');
    expect(html).to.include('<button type="submit" form="subscribe" name="tier" value="team">');
    expect(html).to.include('<form id="subscribe"');
  });

  it('has no inline script or style, so a strict CSP (script-src and style-src self) holds', () => {
    const html = renderPricingPage({ gapOf: () => null });
    expect(html.match(/<script\b[^>]*>/g)).to.deep.equal(['<script src="/pricing.js" defer>']);
    expect(html).not.to.match(/<style\b|\sstyle=|\son[a-z]+=/i);
  });

  it('says checkout is not configured, and offers no form, when no paid tier can be bought; names a tier that cannot', () => {
    const none = renderPricingPage({ gapOf: () => 'checkout is not configured here (PAYMENT_API_KEY is unset)' });
    expect(none).to.include('Checkout is not configured here');
    expect(none).not.to.include('<form');
    expect(none).not.to.include('<button');
    const proOnly = renderPricingPage({
      gapOf: (t) => (t === 'team' ? 'no variant sells the team tier here (PAYMENT_VARIANT_TIERS)' : null),
    });
    expect(proOnly).to.include('value="pro"');
    expect(proOnly).not.to.include('value="team"');
    expect(proOnly).to.include('<p class="note" data-unavailable="team">no variant sells the team tier here (PAYMENT_VARIANT_TIERS)</p>');
  });
});
