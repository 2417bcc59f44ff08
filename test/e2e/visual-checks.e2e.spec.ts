import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { expect } from 'chai';
import { PNG } from 'pngjs';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { ragService } from '../../services/vision-rag/vision-rag.service.ts';
import { chromiumForTests } from '../integration/vision/chromium-under-test.ts';
import { testLogger } from '../support/env.ts';
import { mintKey, retrievalEnv, retrievalPorts } from '../support/retrieval.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';
import { useContractCheck } from '../support/contract-check.ts';

const SHARED_SECRET = 'cd'.repeat(32);
const LOGIN_PASSWORD = 'horse-battery-7';

interface CheckResult {
  name: string;
  status: 'passed' | 'failed';
  message: string;
  screenshotId?: string;
}

/**
 * A page whose `#clock` shows something new on every load (as a date, an ad or an avatar would), and
 * whose `#dot` is one pixel that moves with `?dot=`: what a mask and an absolute pixel limit are for.
 */
function pageSite(): Server {
  let loads = 0;
  return createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    loads++;
    const hue = (loads * 97) % 360;
    const html = (body: string) =>
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(`<!doctype html><html lang="en"><head><title>Shop</title></head><body><main>${body}</main></body></html>`);
    const signedIn = /(?:^|; )session=ok(?:;|$)/.test(req.headers.cookie ?? '');
    if (url.pathname === '/account') {
      if (!signedIn) return void res.writeHead(303, { location: '/login' }).end();
      return html('<h1 class="welcome">Welcome back</h1>');
    }
    if (url.pathname === '/login' && req.method === 'POST') {
      let form = '';
      req.on('data', (c: Buffer) => (form += c.toString()));
      req.on('end', () => {
        const fields = new URLSearchParams(form);
        const ok = fields.get('user') === 'ada' && fields.get('pass') === LOGIN_PASSWORD;
        res
          .writeHead(303, {
            location: ok ? '/account' : '/login?failed=1',
            ...(ok ? { 'set-cookie': 'session=ok; Path=/; HttpOnly' } : {}),
          })
          .end();
      });
      return;
    }
    if (url.pathname === '/login') {
      return html(`<h1>Sign in</h1><form method="post" action="/login"><label>User <input id="user" name="user"></label>
<label>Password <input id="pass" name="pass" type="password"></label><button type="submit">Sign in</button></form>`);
    }
    if (url.pathname === '/prefs') {
      return html(`<h1>Preferences</h1><p id="theme"></p><p id="banner"></p><script>
document.getElementById('theme').textContent = 'theme ' + ((document.cookie.match(/(?:^|; )theme=([^;]*)/) || [])[1] || 'unset');
document.getElementById('banner').textContent = 'banner ' + (localStorage.getItem('banner') || 'unset');</script>`);
    }
    if (url.pathname === '/ticker') {
      // Script-driven, so the capture's "animations disabled" cannot stop it: it never settles.
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(`<!doctype html><html lang="en"><head><title>Ticker</title></head>
<body style="margin:0"><main><h1>Ticker</h1><div id="t" style="width:120px;height:40px;background:#000"></div></main>
<script>let n=0;setInterval(()=>{n=(n+37)%256;document.getElementById('t').style.background='rgb('+n+',80,120)'},16)</script></body></html>`);
      return;
    }
    const dot = Number(url.searchParams.get('dot') ?? 0);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><html lang="en"><head><title>Orders</title>
<style>body{margin:0;font:16px sans-serif;background:#fff} #clock{position:absolute;left:40px;top:40px;width:200px;height:60px;background:hsl(${hue} 80% 45%);color:#fff}
@media (prefers-color-scheme: dark){body{background:#000;color:#fff}}
#dot{position:absolute;top:300px;left:${40 + dot}px;width:2px;height:2px;background:#000}</style></head>
<body><main><h1 style="position:absolute;top:140px;left:40px;margin:0">Orders</h1><div id="clock">load ${loads}</div><div id="dot"></div></main></body></html>`);
  });
}

/** Masks, the absolute pixel limit and viewports of visual checks, on the real browser and stack. */
describe('vision RAG: visual checks with masks, a pixel limit and several viewports (e2e)', function () {
  this.timeout(180_000);
  let platform: RunningPlatform | undefined;
  let site: Server;
  let origin: string;
  let dir: string;
  let rag: string;
  let apiKey: string;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    chromiumForTests();
    const stack = await useStack();
    site = pageSite();
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    dir = mkdtempSync(join(resolve('.data'), `test-${process.pid}-masks-`));
    mkdirSync(join(dir, 'workspace'), { recursive: true });
    const ports = await retrievalPorts();
    rag = `http://127.0.0.1:${ports.rag}`;
    const env = retrievalEnv(
      stack,
      { ports, dir, workspace: join(dir, 'workspace'), sharedSecret: SHARED_SECRET },
      { RAG_PUBLIC_URL: rag, CAPTURE_ALLOWED_HOSTS: origin.replace('http://', ''), CAPTURE_TIMEOUT_MS: '30000' },
    );
    platform = await startServices([keysService, ragService], env, testLogger());
    ({ apiKey } = await mintKey(`http://127.0.0.1:${ports.keys}`, SHARED_SECRET, 'pro', 'masks'));
  });

  after(async () => {
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
    await new Promise<void>((r) => (site ? site.close(() => r()) : r()));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  // Every answer of this spec, checked against the answering face's OpenAPI document.
  useContractCheck();

  const runSuite = async (url: string, suite: Record<string, unknown>): Promise<Record<string, CheckResult>> => {
    const res = await fetch(`${rag}/api/glm/test`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: JSON.stringify({ url, testSuite: suite }),
    });
    const body = (await res.json()) as { results?: CheckResult[] };
    expect(res.status, JSON.stringify(body)).to.equal(200);
    return Object.fromEntries((body.results ?? []).map((r) => [r.name, r]));
  };

  const screenshot = async (id: string): Promise<PNG> => {
    const res = await fetch(`${rag}/api/glm/screenshots/${id}`, { headers: { 'x-api-key': apiKey } });
    expect(res.status).to.equal(200);
    return PNG.sync.read(Buffer.from(await res.arrayBuffer()));
  };

  it('paints masked elements over in the capture, so a change there never fails the check; unmasked, the same change does', async () => {
    const viewport = { width: 400, height: 400 };
    const masked = { name: 'masked', viewport, checks: [{ type: 'visual', name: 'page', mask: ['#clock'] }] };
    const plain = { name: 'plain', viewport, checks: [{ type: 'visual', name: 'page' }] };

    const first = await runSuite(origin, masked);
    expect(first.page!.message).to.match(/baseline/);
    const shot = await screenshot(first.page!.screenshotId!);
    const at = (x: number, y: number) => [...shot.data.subarray((y * shot.width + x) * 4, (y * shot.width + x) * 4 + 3)];
    expect(at(140, 70), 'inside #clock: the mask colour').to.deep.equal([255, 0, 255]);
    expect(at(300, 20), 'outside it: the page').to.deep.equal([255, 255, 255]);
    const again = await runSuite(origin, masked);
    expect(again.page, 'the clock changed under its mask').to.include({ status: 'passed' });

    await runSuite(origin, plain);
    const unmasked = await runSuite(origin, plain);
    expect(unmasked.page, 'the same change without the mask').to.include({ status: 'failed' });
  });

  it('fails a change within maxDiffRatio once it passes maxDiffPixels, and says which limit it passed', async () => {
    const viewport = { width: 400, height: 400 };
    const suite = (name: string, limits: Record<string, number>) => ({
      name,
      viewport,
      checks: [{ type: 'visual', name: 'page', mask: ['#clock'], maxDiffRatio: 0.01, ...limits }],
    });
    await runSuite(`${origin}/?dot=0`, suite('count', { maxDiffPixels: 1 }));
    const moved = await runSuite(`${origin}/?dot=50`, suite('count', { maxDiffPixels: 1 }));
    expect(moved.page, 'eight pixels differ: the dot left four and reached four').to.include({ status: 'failed' });
    expect(moved.page!.message)
      .to.match(/over 1 pixels/)
      .and.not.match(/over 1 %/);

    await runSuite(`${origin}/?dot=0`, suite('ratio-only', {}));
    const ratioOnly = await runSuite(`${origin}/?dot=50`, suite('ratio-only', {}));
    expect(ratioOnly.page, 'the same move is within 1 % alone').to.include({ status: 'passed' });
  });

  it('runs every check at each viewport (size, scale, colour scheme), each with its own baseline, and accepts them all', async () => {
    const suite = {
      name: 'devices',
      viewports: [
        { name: 'phone', width: 200, height: 300, deviceScaleFactor: 2 },
        { name: 'desktop-dark', width: 400, height: 300, colorScheme: 'dark' },
      ],
      checks: [
        { type: 'visual', name: 'page', mask: ['#clock'] },
        { type: 'element', name: 'heading', selector: 'h1', text: 'Orders' },
      ],
    };
    const first = await runSuite(origin, suite);
    expect(Object.keys(first).sort()).to.deep.equal(['heading@desktop-dark', 'heading@phone', 'page@desktop-dark', 'page@phone']);
    expect(first['heading@phone']).to.include({ status: 'passed' });
    const phone = await screenshot(first['page@phone']!.screenshotId!);
    expect([phone.width, phone.height], 'CSS pixels times the scale').to.deep.equal([400, 600]);
    const dark = await screenshot(first['page@desktop-dark']!.screenshotId!);
    expect([dark.width, dark.height]).to.deep.equal([400, 300]);
    expect([...dark.data.subarray((20 * 400 + 300) * 4, (20 * 400 + 300) * 4 + 3)], 'dark scheme: the page is black').to.deep.equal([
      0, 0, 0,
    ]);
    expect([...phone.data.subarray((20 * 400 + 300) * 4, (20 * 400 + 300) * 4 + 3)], 'light scheme: white').to.deep.equal([255, 255, 255]);

    // Sizes differ between the two: had they shared one baseline, the second run would fail on size.
    const again = await runSuite(origin, suite);
    expect(again['page@phone'], again['page@phone']?.message).to.include({ status: 'passed' });
    expect(again['page@desktop-dark'], again['page@desktop-dark']?.message).to.include({ status: 'passed' });

    const accepted = await fetch(`${rag}/api/glm/baselines/devices/accept`, { method: 'POST', headers: { 'x-api-key': apiKey } });
    const body = (await accepted.json()) as { accepted: { check: string }[] };
    expect(body.accepted.map((a) => a.check).sort()).to.deep.equal(['page@desktop-dark', 'page@phone']);
  });

  it('settles a capture on two identical screenshots, and reports a page that never settles as flaky instead of failing for it', async () => {
    const suite = { name: 'settle', viewport: { width: 300, height: 200 }, checks: [{ type: 'visual', name: 'page' }] };
    const still = await runSuite(`${origin}/?dot=0`, { ...suite, name: 'still' });
    expect(still.page).to.not.have.property('flaky');
    expect(still.page!.message).to.not.match(/flaky/);

    const res = await fetch(`${rag}/api/glm/test`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: JSON.stringify({ url: `${origin}/ticker`, testSuite: suite }),
    });
    const body = (await res.json()) as { results: (CheckResult & { flaky?: boolean })[] };
    expect(res.status).to.equal(200);
    const page = body.results[0]!;
    expect(page.flaky).to.equal(true);
    expect(page.message).to.match(/^flaky: the page changed between each of 5 screenshots; /);
    expect(page.status, 'a first run records the baseline: unsettled is reported, not failed').to.equal('passed');
  });

  it('passes a log-in form with steps before the capture, and names a failing step without the value typed', async () => {
    const checks = [{ type: 'element', name: 'welcome', selector: 'h1.welcome', text: 'Welcome back' }];
    const outside = await runSuite(`${origin}/account`, { name: 'account-out', checks });
    expect(outside.welcome, 'without steps the page is the log-in form').to.include({ status: 'failed' });

    const steps = [
      { action: 'fill', selector: '#user', value: 'ada' },
      { action: 'fill', selector: '#pass', value: LOGIN_PASSWORD },
      { action: 'click', selector: 'button[type=submit]' },
      { action: 'waitFor', selector: 'h1.welcome' },
    ];
    const inside = await runSuite(`${origin}/account`, { name: 'account-in', steps, checks });
    expect(inside.welcome, inside.welcome?.message).to.include({ status: 'passed' });

    const res = await fetch(`${rag}/api/glm/test`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: JSON.stringify({
        url: `${origin}/account`,
        testSuite: { name: 'account-bad', steps: [...steps.slice(0, 2), { action: 'click', selector: '#no-such-button' }], checks },
      }),
    });
    const text = await res.text();
    expect(res.status, text).to.equal(422);
    expect(JSON.parse(text)).to.include({ code: 'STEP_FAILED' });
    expect(text).to.include('step 3 (click #no-such-button)').and.not.include(LOGIN_PASSWORD);
  });

  it("sets cookies and localStorage for the page's own site before it loads", async () => {
    const checks = [
      { type: 'element', name: 'theme', selector: '#theme', text: 'theme dark' },
      { type: 'element', name: 'banner', selector: '#banner', text: 'banner hidden' },
    ];
    const plain = await runSuite(`${origin}/prefs`, { name: 'prefs-plain', checks });
    expect(plain.theme).to.include({ status: 'failed' });
    const set = await runSuite(`${origin}/prefs`, {
      name: 'prefs-set',
      cookies: [{ name: 'theme', value: 'dark' }],
      localStorage: { banner: 'hidden' },
      checks,
    });
    expect(set.theme, set.theme?.message).to.include({ status: 'passed' });
    expect(set.banner, set.banner?.message).to.include({ status: 'passed' });
  });

  it('refuses viewports given with viewport, twice the same name, a scale over 3 or more than 4 of them, with a 400', async () => {
    const vp = (name: string, extra: Record<string, unknown> = {}) => ({ name, width: 300, height: 300, ...extra });
    for (const suite of [
      { viewport: { width: 300, height: 300 }, viewports: [vp('a')] },
      { viewports: [vp('a'), vp('a')] },
      { viewports: [vp('a', { deviceScaleFactor: 4 })] },
      { viewports: [vp('a'), vp('b'), vp('c'), vp('d'), vp('e')] },
      { viewports: [vp('a', { colorScheme: 'sepia' })] },
    ]) {
      const res = await fetch(`${rag}/api/glm/test`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
        body: JSON.stringify({ url: origin, testSuite: { name: 'bad', checks: [{ type: 'visual', name: 'page' }], ...suite } }),
      });
      expect(res.status, JSON.stringify(suite)).to.equal(400);
    }
  });

  it('refuses a mask that is not a list of selectors, and more than 20 of them, with a 400', async () => {
    for (const mask of ['#clock', [''], Array.from({ length: 21 }, (_, i) => `#m${i}`)]) {
      const res = await fetch(`${rag}/api/glm/test`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
        body: JSON.stringify({ url: origin, testSuite: { name: 'bad', checks: [{ type: 'visual', name: 'page', mask }] } }),
      });
      expect(res.status, JSON.stringify(mask).slice(0, 40)).to.equal(400);
      expect(((await res.json()) as { error?: string }).error).to.be.a('string');
    }
  });
});
