import { METRICS, type Metric } from '../../kernel/tiers.ts';
import type { UsageAnswer } from '../../keys/keys-answers.ts';
import { chartGeometry, chartSvg, daysOf } from '../usage-chart.ts';
import { amount } from './pricing.page.ts';
import { h, page, when, type Frame } from './layout.ts';

/** The usage page (pure): GET /usage's counts against the tier's limits, and its verifications per day as a chart and a table. */

const METRIC_NAMES: Record<Metric, string> = {
  queries: 'Code queries',
  filesIndexed: 'Files indexed',
  screenshotsAnalyzed: 'Screenshots analysed',
};

/** The verifications of a day, every outcome summed. */
const total = (outcomes: Record<string, number>) => Object.values(outcomes).reduce((a, b) => a + b, 0);

export function usagePage(view: {
  signedIn: NonNullable<Frame['signedIn']>;
  usage: UsageAnswer | null;
  now: Date;
  notice?: Frame['notice'];
}): string {
  const { usage } = view;
  if (!usage)
    return page(
      { title: 'Usage', path: '/usage', signedIn: view.signedIn, ...(view.notice ? { notice: view.notice } : {}) },
      '<p>Usage is counted per API key. <a href="/keys">Connect your key</a> to see it.</p>',
    );
  const rows = METRICS.map((m) => {
    const used = usage.usage[m];
    const limit = usage.limits[m];
    return `<tr><th scope="row">${METRIC_NAMES[m]}</th><td data-metric="${m}">${amount(used)}</td><td>${amount(limit)}</td></tr>`;
  }).join('');
  const start = new Date(Date.UTC(view.now.getUTCFullYear(), view.now.getUTCMonth(), 1));
  const counts = (usage.verifications ?? []).map((d) => ({ day: d.day, count: total(d.outcomes) }));
  const geometry = chartGeometry(daysOf(start, view.now), counts);
  const sum = counts.reduce((a, c) => a + c.count, 0);
  const dayRows = (usage.verifications ?? [])
    .map(
      (d) =>
        `<tr><th scope="row">${h(d.day)}</th><td>${total(d.outcomes)}</td><td>${d.outcomes.VALID}</td><td>${total(d.outcomes) - d.outcomes.VALID}</td></tr>`,
    )
    .join('');
  return page(
    { title: 'Usage', path: '/usage', signedIn: view.signedIn, ...(view.notice ? { notice: view.notice } : {}) },
    `<section class="card" aria-labelledby="month">
<h2 id="month">This month, ${h(usage.tier)} tier</h2>
<p>Counts start again ${when(usage.resetDate)}.</p>
<table><caption class="visually-hidden">Use against the tier's monthly limits</caption>
<thead><tr><th scope="col">What</th><th scope="col">Used</th><th scope="col">Limit</th></tr></thead>
<tbody>${rows}</tbody></table>
</section>
<section class="card" aria-labelledby="per-day">
<h2 id="per-day">Requests per day</h2>
<p>Every verification of your key this month by UTC day, counted within seconds (your requests, and the console's own reads of this page and the keys page): <strong data-total="${sum}">${sum}</strong> in all.</p>
${chartSvg(geometry, `Requests per day this month, ${sum} in all; the table below has each day`)}
<table><caption class="visually-hidden">Requests per day</caption>
<thead><tr><th scope="col">Day</th><th scope="col">Requests</th><th scope="col">Admitted</th><th scope="col">Refused</th></tr></thead>
<tbody>${dayRows || '<tr><td colspan="4">No requests yet this month.</td></tr>'}</tbody></table>
</section>`,
  );
}
