import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { renderHtml } from '../../../services/integration/report/render-html.ts';
import { emptyReport, HOSTILE, sampleReport } from '../../support/sample-report.ts';
import { launchChromiumForTests } from '../vision/chromium-under-test.ts';
import { decodePng } from '../vision/png-pixels.ts';

interface Watched {
  page: Page;
  /** Every request the page asked for, even one its policy then stopped (Chromium still reports it). */
  requests: string[];
  /** The requests that got past the page's policy to the network layer (all aborted there: nothing leaves). */
  routed: string[];
  /** Requests that failed, with why ('csp': stopped by the page's policy). */
  failed: string[];
  /** Console errors (a CSP violation is reported there) and uncaught page errors. */
  errors: string[];
  dialogs: string[];
}

const CHART_IDS = ['queries-per-day', 'findings-by-severity', 'usage-vs-quota', 'visual-test-history', 'validation-verdicts'];

/** [r, g, b] of a #rrggbb colour. */
const rgb = (hex: string): [number, number, number] => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)) as [number, number, number];

describe('the project report page in a real Chromium (integration)', function () {
  this.timeout(60_000);
  let browser: Browser;

  before(async function () {
    this.timeout(600_000); // a first run provisions Chromium
    browser = await launchChromiumForTests();
  });

  after(async () => {
    await browser?.close();
  });

  async function watchedPage(): Promise<Watched> {
    const page = await browser.newPage({ viewport: { width: 960, height: 800 } });
    const watched: Watched = { page, requests: [], routed: [], failed: [], errors: [], dialogs: [] };
    page.on('request', (request) => watched.requests.push(request.url()));
    page.on('requestfailed', (request) => watched.failed.push(`${request.url()} ${request.failure()?.errorText ?? ''}`));
    page.on('console', (message) => {
      if (message.type() === 'error') watched.errors.push(message.text());
    });
    page.on('pageerror', (error) => watched.errors.push(error.message));
    page.on('dialog', (dialog) => {
      watched.dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await page.route('**/*', (route) => {
      watched.routed.push(route.request().url());
      return route.abort();
    });
    return watched;
  }

  it('sees a request when a page makes one (the counter below can fail)', async () => {
    const { page, requests, routed } = await watchedPage();
    await page.setContent('<!doctype html><img src="https://cdn.example/pixel.png" alt="">', { waitUntil: 'load' });
    expect(requests).to.deep.equal(['https://cdn.example/pixel.png']);
    expect(routed).to.deep.equal(['https://cdn.example/pixel.png']);
    await page.close();
  });

  it('loads with no request, no error and no script run, and shows the names as they were typed', async () => {
    const { page, requests, routed, errors, dialogs } = await watchedPage();
    await page.setContent(renderHtml(sampleReport()), { waitUntil: 'load' });
    await page.waitForTimeout(200); // anything lazy (a font, a late image) would have asked by now
    expect(requests).to.deep.equal([]);
    expect(routed).to.deep.equal([]);
    expect(errors).to.deep.equal([]);
    expect(dialogs).to.deep.equal([]);
    expect(await page.locator('script, img, link, iframe, object, embed').count()).to.equal(0);
    expect(await page.locator('h1').textContent()).to.equal(`Project report: ${HOSTILE.projectName}`);
    expect(await page.title()).to.equal(`Project report: ${HOSTILE.projectName}`);
    expect(await page.locator('#visual-tests td', { hasText: 'checkout' }).first().textContent()).to.equal(HOSTILE.suite);
    expect(await page.locator('#validations td', { hasText: 'Cart' }).first().textContent()).to.equal(HOSTILE.component);
    await page.close();
  });

  it('has its policy enforced: markup that got in anyway could fetch nothing', async () => {
    const { page, requests, routed, failed, errors } = await watchedPage();
    const tampered = renderHtml(sampleReport()).replace(
      '<body>',
      '<body><img src="https://cdn.example/pixel.png" alt=""><style>@import "https://cdn.example/a.css";</style>',
    );
    await page.setContent(tampered, { waitUntil: 'load' });
    await page.waitForTimeout(200);
    // Chromium reports the requests it was asked for, then fails them itself, before any network.
    expect(routed).to.deep.equal([]);
    expect(requests).to.have.members(['https://cdn.example/pixel.png', 'https://cdn.example/a.css']);
    expect(failed).to.have.members(['https://cdn.example/pixel.png csp', 'https://cdn.example/a.css csp']);
    expect(errors.join('\n')).to.include('Content Security Policy');
    await page.close();
  });

  it('draws every chart at a real size, named for screen readers, and the page is not blank', async () => {
    const { page } = await watchedPage();
    await page.setContent(renderHtml(sampleReport()), { waitUntil: 'load' });

    const charts = await page.locator('svg.chart').evaluateAll((svgs) =>
      svgs.map((svg) => {
        const box = svg.getBoundingClientRect();
        const shapes = [...svg.querySelectorAll('rect')]
          .map((r) => (r as unknown as { getBBox(): { width: number; height: number } }).getBBox())
          .filter((b) => b.width > 0 && b.height > 0);
        return { id: svg.id, width: box.width, height: box.height, shapes: shapes.length, texts: svg.querySelectorAll('text').length };
      }),
    );
    expect(charts.map((c) => c.id)).to.deep.equal(CHART_IDS);
    for (const chart of charts) {
      expect(chart.width, chart.id).to.be.greaterThan(300);
      expect(chart.height, chart.id).to.be.greaterThan(40);
      expect(chart.shapes, chart.id).to.be.greaterThan(0);
      expect(chart.texts, chart.id).to.be.greaterThan(0);
    }
    for (const name of [
      'Queries per day (UTC)',
      'Findings by severity',
      'Usage against the monthly quota',
      'Visual test runs, oldest first: checks passed and failed',
      'Validation verdicts',
    ]) {
      expect(await page.getByRole('img', { name }).count(), name).to.equal(1);
    }

    const png = decodePng(await page.screenshot({ fullPage: true }));
    const [background, white] = [rgb('#f6f7f9'), rgb('#ffffff')];
    const colours = { queries: rgb('#1a73e8'), passed: rgb('#1e8e3e'), failed: rgb('#d93025') };
    const seen = { ink: 0, queries: 0, passed: 0, failed: 0 };
    const same = (a: readonly number[], b: readonly number[]) => a[0] === b[0] && a[1] === b[1] && a[2] === b[2];
    for (let y = 0; y < png.height; y += 2) {
      for (let x = 0; x < png.width; x += 2) {
        const p = png.pixel(x, y);
        if (!same(p, background) && !same(p, white)) seen.ink++;
        for (const key of ['queries', 'passed', 'failed'] as const) if (same(p, colours[key])) seen[key]++;
      }
    }
    const sampled = Math.ceil(png.height / 2) * Math.ceil(png.width / 2);
    expect(png.height).to.be.greaterThan(1500);
    expect(seen.ink / sampled, 'share of pixels drawn').to.be.greaterThan(0.03);
    expect(seen.queries, 'query columns').to.be.greaterThan(500);
    expect(seen.passed, 'passed checks').to.be.greaterThan(500);
    expect(seen.failed, 'failed checks').to.be.greaterThan(200);
    await page.close();
  });

  it('shows an empty report as notes, not empty charts', async () => {
    const { page, requests, routed, errors } = await watchedPage();
    await page.setContent(renderHtml(emptyReport()), { waitUntil: 'load' });
    expect(requests).to.deep.equal([]);
    expect(routed).to.deep.equal([]);
    expect(errors).to.deep.equal([]);
    expect(await page.locator('svg.chart').evaluateAll((svgs) => svgs.map((s) => s.id))).to.deep.equal(['usage-vs-quota']);
    expect(await page.locator('.no-data').allTextContents()).to.include.members([
      'No queries yet.',
      'No analyses yet.',
      'No visual test runs yet.',
      'No validations yet.',
    ]);
    const box = await page.locator('#usage-vs-quota').boundingBox();
    expect(box?.width).to.be.greaterThan(300);
    for (const id of CHART_IDS.filter((id) => id !== 'usage-vs-quota')) expect(await page.locator(`#${id}`).count(), id).to.equal(0);
    await page.close();
  });
});
