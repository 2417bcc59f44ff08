import { expect } from 'chai';
import { BrowserPool } from '../../../services/vision/browser/browser-pool.ts';
import { capture, type CaptureRequest } from '../../../services/vision/browser/capture.ts';
import { CaptureError, type CaptureErrorCode } from '../../../services/vision/browser/capture-error.ts';
import { parseAllowList } from '../../../services/platform/allow-list.ts';
import type { ResolvedAddress } from '../../../services/vision/browser/ssrf-guard.ts';
import { chromiumForTests, processGone } from './chromium-under-test.ts';
import { startFixtureSite, type FixtureSite } from './fixture-site.ts';
import { decodePng } from './png-pixels.ts';

async function failure(promise: Promise<unknown>): Promise<CaptureError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof CaptureError)) throw new Error(`expected a CaptureError, got ${String(error)}`);
  return error;
}

const expectCode = async (promise: Promise<unknown>, code: CaptureErrorCode): Promise<CaptureError> => {
  const error = await failure(promise);
  expect(error.code, error.message).to.equal(code);
  return error;
};

describe('Page capture in a real Chromium (integration)', function () {
  this.timeout(60_000);
  let site: FixtureSite;
  let pool: BrowserPool;
  const lookups: string[] = [];
  const base = (): Omit<CaptureRequest, 'url'> => ({ timeoutMs: 20_000, maxBytes: 5_000_000, viewport: { width: 400, height: 300 } });

  before(async function () {
    this.timeout(600_000); // a first run provisions Chromium
    const executablePath = chromiumForTests();
    site = await startFixtureSite();
    // A DNS of the test's own: rebind.test answers the allow-listed fixture address once, then a
    // private one, as a rebinding attacker's server would; intranet.test is private from the start.
    const answers: Record<string, ResolvedAddress[][]> = {
      'rebind.test': [[{ address: '127.0.0.1', family: 4 }], [{ address: '10.255.255.1', family: 4 }]],
      'intranet.test': [[{ address: '10.255.255.1', family: 4 }]],
    };
    const lookup = async (host: string) => {
      const seen = lookups.filter((h) => h === host).length;
      lookups.push(host);
      const forHost = answers[host];
      if (forHost === undefined) throw Object.assign(new Error('no such host'), { code: 'ENOTFOUND' });
      return forHost[Math.min(seen, forHost.length - 1)] ?? [];
    };
    pool = new BrowserPool({ executablePath, allowList: parseAllowList(`127.0.0.1:${site.port}`), lookup, maxConcurrent: 2 });
  });

  after(async () => {
    const pid = await pool?.browserPid();
    await pool?.close();
    await site?.close();
    if (pid !== undefined) expect(processGone(pid), `browser ${pid} still running after close()`).to.equal(true);
  });

  it('captures a page: PNG size and colours, title, DOM, accessibility tree and element boxes', async () => {
    const result = await capture(pool, { ...base(), url: `${site.origin}/basic`, elements: true });
    expect([result.width, result.height]).to.deep.equal([400, 300]);
    const image = decodePng(result.png);
    expect(image.pixel(10, 10).slice(0, 3)).to.deep.equal([0, 0, 255]); // the swatch
    expect(image.pixel(300, 250).slice(0, 3)).to.deep.equal([12, 200, 34]); // the body
    expect(result.title).to.equal('Vision fixture');
    expect(result.finalUrl).to.equal(`${site.origin}/basic`);
    expect(result.status).to.equal(200);
    expect(result.dom).to.include('<h1>Hello capture</h1>').and.include('id="swatch"');
    expect(result.accessibility)
      .to.include('heading "Hello capture" [level=1]')
      .and.include('button "Press me"')
      .and.include('navigation "Primary"');
    expect(result.elements?.find((e) => e.tag === 'button')).to.include({ name: 'Press me' });
    expect(result.elements?.find((e) => e.tag === 'h1'))
      .to.include({ x: 0 })
      .and.have.property('y')
      .greaterThanOrEqual(80);
    expect(result.blockedRequests).to.deep.equal([]);
    expect(result.bytesReceived).to.be.greaterThan(500);
    expect(Date.parse(result.capturedAt)).to.be.closeTo(Date.now(), 60_000);
  });

  it('screenshots one element, and says SELECTOR_NOT_FOUND for a missing one', async () => {
    const result = await capture(pool, { ...base(), url: `${site.origin}/basic`, selector: '#swatch' });
    expect([result.width, result.height]).to.deep.equal([100, 50]);
    expect(decodePng(result.png).pixel(50, 25).slice(0, 3)).to.deep.equal([0, 0, 255]);
    await expectCode(capture(pool, { ...base(), url: `${site.origin}/basic`, selector: '#nope' }), 'SELECTOR_NOT_FOUND');
  });

  it('blocks every request of the page to private, loopback and metadata addresses before any connection, and reports them', async () => {
    const started = Date.now();
    const result = await capture(pool, { ...base(), url: `${site.origin}/leaky`, waitFor: { selector: '#done' } });
    // Each way out failed at once: no network timeout was waited for.
    expect(Date.now() - started).to.be.lessThan(10_000);
    expect(result.dom).to.include('failed,failed,failed,failed,failed');
    const blocked = result.blockedRequests.map((b) => `${b.url} ${b.reason}`);
    const expectBlocked = (pattern: RegExp) =>
      expect(
        blocked.some((b) => pattern.test(b)),
        `${pattern} in\n${blocked.join('\n')}`,
      ).to.equal(true);
    expectBlocked(/^http:\/\/10\.255\.255\.1\/pixel\.png private/);
    expectBlocked(/^http:\/\/10\.255\.255\.1\/style\.css private/);
    expectBlocked(/^http:\/\/169\.254\.169\.254\/latest\/meta-data\/iam\/ link-local/);
    expectBlocked(/^http:\/\/\[::ffff:a9fe:a9fe\]\/latest\/ IPv4-mapped link-local/);
    expectBlocked(/^http:\/\/metadata\.google\.internal\/computeMetadata\/v1\/ host name .* is internal/);
    expectBlocked(new RegExp(`^http://127\\.0\\.0\\.1:${site.forbiddenPort}/xhr loopback`));
    expectBlocked(new RegExp(`^http://127\\.0\\.0\\.1:${site.forbiddenPort}/decimal\\.png loopback`));
    expectBlocked(new RegExp(`^ws://127\\.0\\.0\\.1:${site.forbiddenPort}/socket loopback`));
    expect(site.forbiddenConnections(), 'connections that reached the forbidden listener').to.equal(0);
    expect(result.blockedCount).to.equal(result.blockedRequests.length);
  });

  it('refuses a redirect from an allowed page to the metadata address or a loopback port', async () => {
    const metadata = await expectCode(capture(pool, { ...base(), url: `${site.origin}/redirect-metadata` }), 'BLOCKED_URL');
    expect(metadata.message).to.include('http://169.254.169.254/latest/meta-data/').and.include('link-local');
    const loopback = await expectCode(capture(pool, { ...base(), url: `${site.origin}/redirect-loopback` }), 'BLOCKED_URL');
    expect(loopback.message).to.include(`127.0.0.1:${site.forbiddenPort}`);
    expect(site.forbiddenConnections()).to.equal(0);
  });

  it('refuses file:, javascript:, data: and private URLs before using the browser', async () => {
    // A pool of its own, never used: a refusal that took a slot would launch its browser.
    const unused = new BrowserPool({
      executablePath: chromiumForTests(),
      allowList: parseAllowList(`127.0.0.1:${site.port}`),
      maxConcurrent: 1,
    });
    try {
      for (const url of [
        'file:///etc/passwd',
        'javascript:alert(1)',
        'data:text/html,<h1>x</h1>',
        'http://169.254.169.254/',
        'http://[::1]/',
        'http://localhost/',
        `http://127.0.0.1:${site.forbiddenPort}/`,
      ]) {
        const error = await expectCode(capture(unused, { ...base(), url }), 'BLOCKED_URL');
        expect(error.message).to.match(/scheme|loopback|link-local|internal/);
      }
      expect(unused.stats.launches, 'browsers launched for refusals').to.equal(0);
    } finally {
      await unused.close();
    }
    expect(site.forbiddenConnections()).to.equal(0);
  });

  it('refuses a host name that resolves to a private address', async () => {
    const error = await expectCode(capture(pool, { ...base(), url: `http://intranet.test:${site.port}/basic` }), 'BLOCKED_URL');
    expect(error.message).to.include('host intranet.test is not allowed: it resolves to a private or internal address');
    expect(error.message).to.not.include('10.255');
  });

  it('connects to the address it vetted, asking DNS once per capture: rebinding gets nowhere', async () => {
    lookups.length = 0;
    const result = await capture(pool, { ...base(), url: `http://rebind.test:${site.port}/with-image`, waitFor: 'networkidle' });
    expect(result.title).to.equal('Same host');
    // Page and image reached the fixture under the name (the browser handed the name to the proxy,
    // whose one answer was 127.0.0.1); the second, private answer was never asked for.
    expect(site.requests.filter((r) => r.host === `rebind.test:${site.port}`).map((r) => r.path)).to.include.members([
      '/with-image',
      '/blob/x',
    ]);
    expect(lookups).to.deep.equal(['rebind.test']);
    expect(result.blockedRequests).to.deep.equal([]);
  });

  it('enforces the timeout on a page that never answers', async () => {
    const started = Date.now();
    const error = await expectCode(capture(pool, { ...base(), url: `${site.origin}/slow`, timeoutMs: 1500 }), 'TIMEOUT');
    expect(Date.now() - started, error.message).to.be.within(1400, 8000);
  });

  it('stops at the page-weight limit: later requests refused and reported', async () => {
    const result = await capture(pool, { ...base(), url: `${site.origin}/heavy`, maxBytes: 250_000, waitFor: { selector: '#done' } });
    expect(result.pageWeightExceeded).to.equal(true);
    expect(result.blockedRequests.filter((b) => b.reason === 'page weight limit reached').map((b) => b.url)).to.include(
      `${site.origin}/blob/5`,
    );
    const served = site.requests.filter((r) => r.path.startsWith('/blob/')).length;
    expect(served).to.be.lessThan(6);
  });

  it('clips a very tall full-page screenshot to the pixel cap and says so', async () => {
    const result = await capture(pool, { ...base(), url: `${site.origin}/tall`, fullPage: true, maxScreenshotPixels: 400 * 2000 });
    expect([result.width, result.height]).to.deep.equal([400, 2000]);
    expect(result.truncated.screenshot).to.equal(true);
    const full = await capture(pool, { ...base(), url: `${site.origin}/basic`, fullPage: true });
    expect([full.width, full.height, full.truncated.screenshot]).to.deep.equal([400, 300, false]);
  });

  it('cuts the DOM at maxDomChars, in the page, and says so', async () => {
    const result = await capture(pool, { ...base(), url: `${site.origin}/basic`, maxDomChars: 100 });
    expect(result.dom)
      .to.have.length(100)
      .and.match(/^<!DOCTYPE html><html lang="en">/);
    expect(result.truncated).to.include({ dom: true });
  });

  it('lets a page that exhausts its memory crash alone (NAVIGATION_FAILED); the browser carries on', async () => {
    const launches = pool.stats.launches;
    const error = await expectCode(capture(pool, { ...base(), url: `${site.origin}/oom` }), 'NAVIGATION_FAILED');
    expect(error.message).to.include('crashed');
    expect((await capture(pool, { ...base(), url: `${site.origin}/basic` })).title).to.equal('Vision fixture');
    expect(pool.stats.launches).to.equal(launches);
  });

  it('gives each capture a fresh context: nothing a page stores is seen by the next', async () => {
    const first = await pool.run(
      { deadline: Date.now() + 20_000, maxBytes: 1_000_000, viewport: { width: 300, height: 200 } },
      async ({ context }) => {
        const page = await context.newPage();
        await page.goto(`${site.origin}/basic`);
        await page.evaluate("document.cookie = 'customer=a; max-age=3600'; localStorage.setItem('k', 'a')");
        return page.evaluate('document.cookie');
      },
    );
    expect(first).to.equal('customer=a');
    const second = await pool.run(
      { deadline: Date.now() + 20_000, maxBytes: 1_000_000, viewport: { width: 300, height: 200 } },
      async ({ context }) => {
        const page = await context.newPage();
        await page.goto(`${site.origin}/basic`);
        return page.evaluate("[document.cookie, localStorage.getItem('k')]");
      },
    );
    expect(second).to.deep.equal(['', null]);
  });
});
