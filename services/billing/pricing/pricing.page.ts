import { TIERS, UNLIMITED, limitsOf, type Metric, type Tier } from '../../kernel/tiers.ts';
import { MONTHLY_PRICE_USD } from './prices.ts';

/** The pricing page (pure): the tier table of the kernel, the prices, and a form that starts a checkout. */

export interface PricingView {
  /** Why a paid tier cannot be bought here (checkoutGap), or null when it can. */
  gapOf: (tier: Tier) => string | null;
}

const METRIC_NAMES: Record<Metric, string> = {
  queries: 'code queries',
  filesIndexed: 'files indexed',
  screenshotsAnalyzed: 'screenshots analysed',
};

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const amount = (n: number) => (n === UNLIMITED ? 'unlimited' : n.toLocaleString('en-US'));

function tierCard(tier: Tier, gap: string | null): string {
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
  const action =
    tier === 'free'
      ? '<p class="note">Every new account starts here.</p>'
      : gap === null
        ? `<button type="submit" form="subscribe" name="tier" value="${tier}">Subscribe to ${tier}</button>`
        : `<p class="note" data-unavailable="${tier}">${escapeHtml(gap)}</p>`;
  return `<section class="tier" data-tier="${tier}">
  <h2>${tier}</h2>
  <p class="price"><span data-price>$${MONTHLY_PRICE_USD[tier]}</span> a month</p>
  <ul>
    <li>${amount(limits.requestsPerMinute)} requests a minute</li>
    ${quotas}
    ${features}
  </ul>
  ${action}
</section>`;
}

export function renderPricingPage(view: PricingView): string {
  const paid = TIERS.filter((t) => t !== 'free');
  const sellable = paid.some((t) => view.gapOf(t) === null);
  const form = sellable
    ? `<form id="subscribe" action="#" method="post" novalidate>
  <h2>Your account</h2>
  <p>Sign in (or create an account) and choose a tier above: you go on to the payment provider's checkout, and your API key arrives by e-mail once you have paid.</p>
  <label>E-mail <input type="email" name="email" autocomplete="email" required></label>
  <label>Password <input type="password" name="password" autocomplete="current-password" minlength="8" required></label>
  <label><input type="checkbox" name="create"> I have no account yet: create one</label>
  <label>Name (new accounts) <input type="text" name="name" autocomplete="name"></label>
  <p id="status" role="status" aria-live="polite"></p>
</form>
<noscript><p>Subscribing from this page needs JavaScript: it signs you in and asks for a checkout (POST /billing/checkout).</p></noscript>`
    : '<p class="note" id="not-configured">Checkout is not configured here: subscriptions cannot be bought from this page.</p>';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc pricing</title>
<link rel="stylesheet" href="/pricing.css">
<script src="/pricing.js" defer></script>
</head>
<body>
<main>
<h1>Pricing</h1>
<div class="tiers">
${TIERS.map((t) => tierCard(t, t === 'free' ? null : view.gapOf(t))).join('\n')}
</div>
${form}
</main>
</body>
</html>
`;
}
