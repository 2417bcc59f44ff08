import { TIERS, UNLIMITED, limitsOf, type Metric, type Tier } from '../../kernel/tiers.ts';
import { MONTHLY_PRICE_USD } from '../../billing/pricing/prices.ts';
import { csrfField, h, page, type Frame } from './layout.ts';

/**
 * The pricing page (pure): the kernel's tier table and the prices GET /pricing shows. A paid tier's
 * button posts to the console, which calls POST /billing/checkout with the account's session and
 * links to the provider's checkout it answers.
 */

const METRIC_NAMES: Record<Metric, string> = {
  queries: 'code queries',
  filesIndexed: 'files indexed',
  screenshotsAnalyzed: 'screenshots analysed',
};

export const amount = (n: number): string => (n === UNLIMITED ? 'unlimited' : n.toLocaleString('en-US'));

export interface PricingView {
  /** null: signed out (the buttons become a sign-up link). */
  signedIn: (Frame['signedIn'] & { tier: Tier }) | null;
  notice?: Frame['notice'];
  /** The provider's checkout to continue to, after a successful POST /pricing/checkout. */
  checkoutUrl?: { tier: Tier; url: string };
}

function tierCard(tier: Tier, view: PricingView): string {
  const limits = limitsOf(tier);
  const quotas = (Object.entries(limits.quotas) as [Metric, number][])
    .map(([metric, n]) => `<li>${amount(n)} ${METRIC_NAMES[metric]} a month</li>`)
    .join('');
  const features = [
    limits.features.visionRAG ? 'page captures and vision analysis' : 'code retrieval only (no vision)',
    ...(limits.features.prioritySupport ? ['priority support'] : []),
  ]
    .map((f) => `<li>${f}</li>`)
    .join('');
  let action: string;
  if (view.signedIn?.tier === tier) action = '<p class="current">Your current tier</p>';
  else if (tier === 'free') action = '<p class="note">Every new account starts here.</p>';
  else if (!view.signedIn) action = `<p><a class="button" href="/signup">Sign up to subscribe to ${tier}</a></p>`;
  else
    action = `<form method="post" action="/pricing/checkout">${csrfField(view.signedIn.csrf)}<input type="hidden" name="tier" value="${tier}"><button type="submit">Subscribe to ${tier}</button></form>`;
  return `<section class="tier card" aria-labelledby="tier-${tier}">
<h2 id="tier-${tier}">${tier}</h2>
<p class="price"><strong>$${MONTHLY_PRICE_USD[tier]}</strong> a month</p>
<ul><li>${amount(limits.requestsPerMinute)} requests a minute</li>${quotas}${features}</ul>
${action}
</section>`;
}

export function pricingPage(view: PricingView): string {
  const go = view.checkoutUrl
    ? `<section class="card checkout" aria-labelledby="checkout"><h2 id="checkout">Continue to payment</h2><p>Your ${view.checkoutUrl.tier} checkout is ready at the payment provider. Your API key arrives by e-mail once you have paid.</p><p><a class="button" href="${h(view.checkoutUrl.url)}" rel="noreferrer">Pay for ${view.checkoutUrl.tier} at the provider</a></p></section>`
    : '';
  return page(
    {
      title: 'Pricing',
      path: '/pricing',
      ...(view.signedIn ? { signedIn: { name: view.signedIn.name, csrf: view.signedIn.csrf } } : {}),
      ...(view.notice ? { notice: view.notice } : {}),
    },
    `${go}<div class="tiers">${TIERS.map((t) => tierCard(t, view)).join('')}</div>
<p class="note">Monthly quotas start again on the 1st (UTC). Paying is done at the payment provider; the console never sees a card.</p>`,
  );
}
