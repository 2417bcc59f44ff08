import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { randomInt, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { freePort } from '../../deploy/local/processes.ts';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { accountsService } from '../../services/accounts/accounts.service.ts';
import { billingService } from '../../services/billing/billing.service.ts';
import { webhookIngressService } from '../../services/billing/webhook-ingress.service.ts';
import { CONSOLE_CSP } from '../../services/console/console.routes.ts';
import { consoleService } from '../../services/console/console.service.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { mailerService } from '../../services/mailer/mailer.service.ts';
import { ragService } from '../../services/vision-rag/vision-rag.service.ts';
import { launchChromiumForTests } from '../integration/vision/chromium-under-test.ts';
import { useContractCheck } from '../support/contract-check.ts';
import { eventually, testEnv, testLogger } from '../support/env.ts';
import { deliver, subscriptionPayload } from '../support/lemonsqueezy.ts';
import { mailTo } from '../support/mailpit.ts';
import { ProviderReplay, recorded } from '../support/provider-replay.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';
import { IMPACTS, WIDTHS, axeScan, byImpact } from './console-pages.ts';

const SIGNING_SECRET = 'e2e-console-signing-secret-0123';
// The provider's sample subscription: store 31120, variant 301789 (sold here as pro).
const STORE = '31120';
const PRO_VARIANT = '301789';
const KEY = /svc_[A-Za-z0-9]{33}/g;
const FIXTURE = resolve('test/fixtures/rag-repo');
/**
 * The README's screenshots are this test's: SVC_SCREENSHOTS=docs writes them into docs/images (to
 * refresh them); otherwise they go to the test's own folder, so a test run leaves the tree as it was.
 */
const SCREENSHOTS_TO_DOCS = process.env.SVC_SCREENSHOTS === 'docs';

/**
 * The customer console in a real browser (the provisioned Chromium): one new customer from sign-up
 * to a first key (checkout replayed at the provider's HTTP boundary, then the provider's signed
 * webhook), a rotation, a collection indexed from the page, the usage chart after a query, and
 * the accessibility scan of every page at a phone and a desktop width. The steps build on each
 * other, as a customer's visit does: each `it` starts where the one before left the account.
 */
describe('the customer console in a browser (e2e)', function () {
  this.timeout(120_000);
  let stack: StackEnv;
  let platform: RunningPlatform;
  let provider: ProviderReplay;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let consoleUrl: string;
  let webhooks: string;
  let rag: string;
  let dir: string;
  let workspace: string;
  const email = `console-${randomUUID().slice(0, 8)}@example.test`;
  const password = 'correct horse battery';
  let apiKey = '';
  let userId: string;
  let jobUrl = '';
  let runId = '';
  let site: Server;
  let siteOrigin: string;

  /** A page whose box moves with `?at=`, for a visual test that fails once it moved. */
  const boxSite = (): Server =>
    createServer((req, res) => {
      const at = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('at') ?? 0);
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(
          `<!doctype html><html lang="en"><head><title>Box</title><style>body{margin:0} #box{position:absolute;top:80px;left:${10 + at}px;width:40px;height:40px;background:#c00}</style></head><body><main><h1>Orders</h1><div id="box"></div></main></body></html>`,
        );
    });

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    stack = await useStack();
    if (!stack.MAILPIT_URL) this.skip();
    dir = mkdtempSync(join(resolve('.data'), `test-${process.pid}-console-`));
    workspace = join(dir, 'workspace');
    mkdirSync(workspace, { recursive: true });
    cpSync(FIXTURE, join(workspace, 'shop'), { recursive: true });
    site = boxSite();
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    siteOrigin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    provider = new ProviderReplay();
    provider.answer(
      'POST',
      (p) => p === '/v1/checkouts',
      () => ({ status: 201, body: recorded('checkout-created') }),
    );
    const ports = {
      accounts: await freePort(),
      keys: await freePort(),
      webhooks: await freePort(),
      rag: await freePort(),
      console: await freePort(),
    };
    const env = testEnv(stack, {
      ACCOUNTS_PORT: String(ports.accounts),
      KEYS_PORT: String(ports.keys),
      WEBHOOKS_PORT: String(ports.webhooks),
      RAG_PORT: String(ports.rag),
      MCP_PORT: String(await freePort()),
      CONSOLE_PORT: String(ports.console),
      AUTH_URL: `http://127.0.0.1:${ports.keys}`,
      WEBHOOK_SECRET: 'ab'.repeat(32),
      KEY_ENCRYPTION_KEY: 'cd'.repeat(32),
      CONSOLE_SECRET: 'ef'.repeat(32),
      PAYMENT_WEBHOOK_SECRET: SIGNING_SECRET,
      PAYMENT_API_KEY: `e2e-console-${'k'.repeat(40)}`,
      PAYMENT_STORE_ID: STORE,
      PAYMENT_VARIANT_TIERS: `${PRO_VARIANT}:pro,301790:team`,
      RAG_ROOTS: workspace,
      RAG_DATA_DIR: join(dir, 'rag'),
      RAG_ROOTS_LAYOUT: 'shared',
      RAG_PUBLIC_URL: `http://127.0.0.1:${ports.rag}`,
      CAPTURE_ALLOWED_HOSTS: siteOrigin.replace('http://', ''),
      CAPTURE_TIMEOUT_MS: '30000',
    });
    platform = await startServices(
      [accountsService, keysService, webhookIngressService, billingService, mailerService, ragService, consoleService],
      env,
      testLogger(),
    );
    consoleUrl = `http://127.0.0.1:${ports.console}`;
    webhooks = `http://127.0.0.1:${ports.webhooks}`;
    rag = `http://127.0.0.1:${ports.rag}`;
    browser = await launchChromiumForTests();
    context = await browser.newContext({ viewport: WIDTHS.desktop });
    page = await context.newPage();
  });

  after(async () => {
    await context?.close();
    await browser?.close();
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
    await provider?.stop();
    await new Promise<void>((r) => (site ? site.close(() => r()) : r()));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  useContractCheck();

  const mailedKeys = async (): Promise<string[]> => {
    const mails = (await mailTo(stack.MAILPIT_URL, email)).filter((m) => /API key/.test(m.Subject));
    return mails.reverse().flatMap((m) => m.Text.match(KEY)?.slice(0, 1) ?? []);
  };
  const nthKey = (n: number) =>
    eventually(`key e-mail #${n}`, async () => {
      const keys = await mailedKeys();
      return keys.length >= n ? keys[n - 1] : undefined;
    });
  const go = async (path: string) => {
    const res = await page.goto(`${consoleUrl}${path}`);
    expect(res?.status(), path).to.equal(200);
    return res!;
  };
  const connect = async (key: string) => {
    await go('/keys');
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Connect key' }).click();
    await page.waitForURL(/\/keys\?connected=1$/);
  };
  const shot = (name: string) =>
    page.screenshot({
      path: join(SCREENSHOTS_TO_DOCS ? resolve('docs/images') : join(dir, 'screenshots'), `console-${name}.png`),
      fullPage: true,
    });

  it('takes a new customer from sign-up through checkout and the signed webhook to a first key, shown by its last four only', async () => {
    const res = await go('/signup');
    expect(await res.headerValue('content-security-policy')).to.equal(CONSOLE_CSP);
    await page.getByLabel('Name').fill('Ada Console');
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL(/\/pricing\?welcome=1$/);
    expect(await page.getByRole('status').textContent()).to.match(/free tier/);

    // The session cookie: HttpOnly, Secure, SameSite=Strict; no page script can read it.
    const session = (await context.cookies()).find((c) => c.name === 'svc_session');
    expect(session).to.include({ httpOnly: true, secure: true, sameSite: 'Strict', path: '/' });
    expect(await page.evaluate('document.cookie')).to.equal('');
    expect(await page.evaluate('JSON.stringify(localStorage)')).to.equal('{}');
    expect(await page.content()).not.to.include(session!.value);
    await shot('pricing');

    await page.getByRole('button', { name: 'Subscribe to pro' }).click();
    const pay = page.getByRole('link', { name: 'Pay for pro at the provider' });
    const checkoutUrl = (recorded('checkout-created').data as { attributes: { url: string } }).attributes.url;
    expect(await pay.getAttribute('href')).to.equal(checkoutUrl);
    const sent = provider.sent.filter((r) => r.path === '/v1/checkouts').at(-1)?.body as {
      data: { attributes: { checkout_data: { email: string; custom: { user_id: string } } } };
    };
    expect(sent.data.attributes.checkout_data.email).to.equal(email);
    userId = sent.data.attributes.checkout_data.custom.user_id;

    // The customer pays at the provider; the provider signs its webhook, which carries the account id.
    const webhook = subscriptionPayload('subscription_created', {
      subscriptionId: randomInt(1_000_000, 9_000_000),
      userId,
      attributes: { user_email: email, store_id: Number(STORE), variant_id: Number(PRO_VARIANT) },
    });
    expect((await deliver(webhooks, SIGNING_SECRET, webhook)).status).to.equal(200);
    apiKey = (await nthKey(1))!;

    await eventually('the account on pro', async () => {
      await go('/account');
      return (await page.locator('[data-tier]').textContent()) === 'pro' ? true : undefined;
    });
    await connect(apiKey);
    const last4 = await page.locator('[data-last4]').getAttribute('data-last4');
    expect(last4).to.equal(apiKey.slice(-4));
    // Created today (UTC), from GET /usage's facts of the key; it never expires.
    const facts = await page.locator('dl.facts').textContent();
    expect(facts)
      .to.include(`Created${new Date().toISOString().slice(0, 10)}`)
      .and.include('Expiresnever');
    const html = await page.content();
    expect(html).not.to.include(apiKey);
    expect(html).not.to.include(apiKey.slice(4, 12));
    const keyCookie = (await context.cookies()).find((c) => c.name === 'svc_key');
    expect(keyCookie).to.include({ httpOnly: true, secure: true, sameSite: 'Strict' });
    expect(keyCookie!.value).not.to.include(apiKey.slice(4));
  });

  it('refuses a form without the session’s CSRF token, changing nothing', async () => {
    const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    for (const csrf of ['', 'forged-token']) {
      const res = await fetch(`${consoleUrl}/keys/rotate`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams({ csrf, grace: 'none' }),
        redirect: 'manual',
      });
      expect(res.status).to.equal(403);
      expect(await res.text()).not.to.include(apiKey);
    }
    expect((await mailedKeys()).length).to.equal(1);
  });

  it('rotates the key: the page says the new key went by e-mail and shows its last four; the old key stops at once', async () => {
    await go('/keys');
    await page.getByLabel('stops at once (it may have leaked)').check();
    await page.getByRole('button', { name: 'Rotate key' }).click();
    const notice = page.locator('[data-rotated]');
    await notice.waitFor();
    expect(await notice.textContent()).to.match(/sent to the e-mail address of your subscription/);
    expect(await notice.textContent()).to.match(/stopped working at once/);
    const newKey = (await nthKey(2))!;
    expect(newKey).not.to.equal(apiKey);
    expect(await notice.getAttribute('data-rotated')).to.equal(newKey.slice(-4));
    expect(await page.content()).not.to.include(newKey);
    await shot('keys-rotated');

    await eventually('the old key refused', async () => {
      await go('/keys');
      return (await page.getByText('no longer works').count()) > 0 ? true : undefined;
    });
    apiKey = newKey;
    await connect(apiKey);
    expect(await page.locator('[data-last4]').getAttribute('data-last4')).to.equal(apiKey.slice(-4));
    await shot('keys');
  });

  it('sets up and indexes a collection from the page, following the job until it ends', async () => {
    await go('/collections');
    await page.getByLabel('Name').fill('shop');
    await page.getByLabel('Project folder').fill(join(workspace, 'shop'));
    await page.getByRole('button', { name: 'Set up and index' }).click();
    await page.waitForURL(/\/collections\/jobs\/[0-9a-f-]{36}$/);
    jobUrl = new URL(page.url()).pathname;
    // The job page reloads itself (meta refresh) while the job runs.
    const ended = page.locator('[data-status="completed"], [data-status="failed"]');
    await ended.waitFor({ timeout: 90_000 });
    expect(await page.locator('main').textContent()).not.to.match(/\bfailed\b/);
    expect(await ended.getAttribute('data-status')).to.equal('completed');
    await go('/collections');
    const row = page.locator('tr[data-collection="shop"]');
    expect(Number(await row.locator('[data-files]').textContent())).to.be.greaterThan(3);
    expect(Number(await row.locator('[data-chunks]').textContent())).to.be.greaterThan(3);
    await shot('collections');
  });

  it('deletes a collection from the page once its deletion is confirmed, leaving the others', async () => {
    await go('/collections');
    await page.getByLabel('Name').fill('scratch');
    await page.getByLabel('Project folder').fill(join(workspace, 'shop'));
    await page.getByRole('button', { name: 'Set up and index' }).click();
    await page.locator('[data-status="completed"], [data-status="failed"]').waitFor({ timeout: 90_000 });
    await go('/collections');
    const row = page.locator('tr[data-collection="scratch"]');
    // The box must be ticked: the browser does not send the form without it.
    await row.getByRole('button', { name: 'Delete scratch' }).click();
    expect(await row.count()).to.equal(1);
    await row.getByLabel('Delete its index of scratch, not the folder').check();
    await row.getByRole('button', { name: 'Delete scratch' }).click();
    await page.getByText('Collection scratch is deleted').waitFor();
    expect(await page.locator('tr[data-collection="scratch"]').count()).to.equal(0);
    expect(await page.locator('tr[data-collection="shop"]').count()).to.equal(1);
  });

  it('reviews a visual test run: its snapshots, the review page under its own policy, and a snapshot accepted', async () => {
    const suite = {
      name: 'box',
      viewports: [
        { name: 'phone', width: 200, height: 300 },
        { name: 'desktop', width: 400, height: 300 },
      ],
      checks: [{ type: 'visual', name: 'page' }],
    };
    const test = async (at: number) => {
      const res = await fetch(`${rag}/api/glm/test`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
        body: JSON.stringify({ url: `${siteOrigin}/?at=${at}`, testSuite: suite }),
      });
      expect(res.status).to.equal(200);
      return ((await res.json()) as { runId: string }).runId;
    };
    const firstRunId = await test(0);
    runId = await test(60);
    await go('/runs');
    // The key's recent runs, newest first, each a link to it.
    const listed = await page.locator('tr[data-run]').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-run')));
    expect(listed.slice(0, 2)).to.deep.equal([runId, firstRunId]);
    await page.locator(`tr[data-run="${runId}"] a`).click();
    await page.waitForURL(new RegExp(`/runs/${runId}$`));
    await go('/runs');
    await page.getByLabel('Run id').fill(runId);
    await page.getByRole('button', { name: 'Open run' }).click();
    await page.waitForURL(new RegExp(`/runs/${runId}$`));
    expect(await page.locator('[data-failed]').getAttribute('data-failed')).to.equal('2');
    expect(await page.locator('tr[data-snapshot]').count()).to.equal(2);
    await shot('run');

    // The vision service's own page, under its own policy (nonces; no form, nothing fetched, no framing).
    const review = await go(`/runs/${runId}/review`);
    expect(await review.headerValue('content-security-policy')).to.match(
      /^default-src 'none'; style-src 'nonce-[^']+'; script-src 'nonce-[^']+'; img-src data:.*frame-ancestors 'none'/,
    );
    expect(await page.locator('img[src^="data:image/png"]').count()).to.be.greaterThan(3);
    await page.goBack();

    await page.getByRole('button', { name: 'Accept page@phone' }).click();
    await page.waitForURL(/\?decided=/);
    expect(await page.locator('tr[data-snapshot="page@phone"] [data-decision]').getAttribute('data-decision')).to.equal('accepted');
    expect(await page.locator('tr[data-snapshot="page@desktop"] [data-decision]').getAttribute('data-decision')).to.equal('undecided');
    const json = (await (await fetch(`${rag}/api/glm/runs/${runId}`, { headers: { 'x-api-key': apiKey } })).json()) as {
      snapshots: { snapshot: string; decision: string | null }[];
    };
    expect(json.snapshots.find((x) => x.snapshot === 'page@phone')?.decision).to.equal('accepted');
  });

  it('shows the integration report the API renders, under its own policy, from a form', async () => {
    await go('/reports');
    await page.getByLabel('Report title').fill('Shop report');
    await page.getByLabel('Collection (optional)').fill('shop');
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.url().includes('/reports/view')),
      page.getByRole('button', { name: 'Show report' }).click(),
    ]);
    expect(answer.status()).to.equal(200);
    expect(await answer.headerValue('content-security-policy')).to.equal(
      "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    );
    await page.waitForLoadState();
    expect(await page.locator('h1').first().textContent()).to.include('Shop report');
    expect(await page.content()).not.to.include(apiKey);
    await shot('report');
  });

  it('moves the usage chart after a query made with the key', async () => {
    await go('/usage');
    const before = Number(await page.locator('[data-total]').getAttribute('data-total'));
    const today = new Date().toISOString().slice(0, 10);
    const barBefore = Number((await page.locator(`rect[data-day="${today}"]`).getAttribute('data-count')) ?? 0);
    const query = await fetch(`${rag}/api/rag/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: JSON.stringify({ collectionName: 'shop', query: 'inventory stock' }),
    });
    expect(query.status).to.equal(200);
    const after = await eventually('the chart to count the query', async () => {
      await go('/usage');
      const total = Number(await page.locator('[data-total]').getAttribute('data-total'));
      return total > before ? total : undefined;
    });
    expect(after).to.be.greaterThan(before);
    const bar = page.locator(`rect[data-day="${today}"]`);
    expect(Number(await bar.getAttribute('data-count'))).to.be.greaterThan(barBefore);
    expect(Number(await bar.getAttribute('height'))).to.be.greaterThan(0);
    await shot('usage');
  });

  it('changes the password and keeps the customer signed in (the old session ends); logs out, which clears the cookies and revokes the token', async () => {
    const cookieOf = async (name: string) => (await context.cookies()).find((c) => c.name === name)?.value;
    const oldToken = await cookieOf('svc_session');
    await go('/account');
    await page.getByLabel('Current password').fill(password);
    await page.getByLabel('New password').fill(`${password} 2`);
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.waitForURL(/\/account\?changed=1$/);
    expect(await page.getByRole('status').textContent()).to.match(/password is changed/);
    expect(await cookieOf('svc_session')).not.to.equal(oldToken);
    await shot('account');
    // The token from before the change opens nothing: the console sends it back to the log-in page and drops it.
    const stale = await fetch(`${consoleUrl}/account`, { headers: { cookie: `svc_session=${oldToken}` }, redirect: 'manual' });
    expect(stale.status).to.equal(303);
    expect(stale.headers.get('location')).to.equal('/login');
    expect(stale.headers.get('set-cookie')).to.match(/^svc_session=; .*Max-Age=0/);

    const session = await cookieOf('svc_session');
    // The header's button (the account page also has "Log out everywhere").
    await page.getByRole('button', { name: /^Log out Ada/ }).click();
    await page.waitForURL(/\/login\?out=1$/);
    const left = (await context.cookies()).map((c) => c.name);
    expect(left).not.to.include('svc_session');
    expect(left).not.to.include('svc_key');
    // Log-out revoked the token itself: a copy of the cookie opens nothing any more.
    const copied = await fetch(`${consoleUrl}/account`, { headers: { cookie: `svc_session=${session}` }, redirect: 'manual' });
    expect(copied.status).to.equal(303);
    expect(copied.headers.get('location')).to.equal('/login');
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(`${password} 2`);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(/\/account$/);
    await connect(apiKey);
  });

  it('works with the keyboard alone: a skip link first, every control reachable with Tab, focus visible', async () => {
    await go('/login');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.textContent')).to.equal('Skip to content');
    const focusRing = await page.evaluate('getComputedStyle(document.activeElement).outlineStyle');
    expect(focusRing).to.equal('solid');
    await go('/keys');
    const reached: string[] = [];
    for (let i = 0; i < 25; i++) {
      await page.keyboard.press('Tab');
      reached.push(String(await page.evaluate("document.activeElement.textContent || document.activeElement.name || ''")));
    }
    expect(reached).to.include.members(['Keys', 'Usage', 'Rotate key']);
  });

  it('has no accessibility problem above minor on any page, at a phone and a desktop width (axe-core)', async () => {
    const signedIn = [
      '/account',
      '/keys',
      '/usage',
      '/collections',
      jobUrl,
      '/runs',
      `/runs/${runId}`,
      `/runs/${runId}/review`,
      '/reports',
      '/reports/view?projectName=Shop+report&collectionName=shop',
      '/audit',
      '/pricing',
      '/no-such-page',
    ];
    const signedOut = ['/login', '/signup', '/pricing'];
    const fresh = await browser.newContext({ viewport: WIDTHS.desktop });
    const outPage = await fresh.newPage();
    const rows: string[] = [];
    const serious: string[] = [];
    try {
      for (const [width, viewport] of Object.entries(WIDTHS)) {
        for (const [who, p, paths] of [
          ['signed in', page, signedIn],
          ['signed out', outPage, signedOut],
        ] as const) {
          await p.setViewportSize(viewport);
          for (const path of paths) {
            await p.goto(`${consoleUrl}${path}`);
            const violations = await axeScan(p);
            const counts = byImpact(violations);
            rows.push(`${width.padEnd(7)} ${who.padEnd(10)} ${path.padEnd(52)} ${IMPACTS.map((i) => `${i} ${counts[i]}`).join(', ')}`);
            for (const v of violations)
              if (v.impact !== 'minor') serious.push(`${width} ${path}: ${v.impact} ${v.id} (${v.help}, ${v.nodes} nodes)`);
          }
        }
      }
    } finally {
      await fresh.close();
    }
    process.stdout.write(`      axe-core violations by impact:\n${rows.map((r) => `        ${r}`).join('\n')}\n`);
    expect(serious).to.deep.equal([]);
  });

  it("shows a team key's audit log, filtered by kind, and tells a pro key it is the team tier's", async () => {
    await go('/audit');
    expect(await page.locator('[data-audit="not-team"]').count()).to.equal(1);

    // The same customer buys the team tier: a second subscription, its key by e-mail.
    const webhook = subscriptionPayload('subscription_created', {
      subscriptionId: randomInt(1_000_000, 9_000_000),
      userId,
      attributes: { user_email: email, store_id: Number(STORE), variant_id: 301790 },
    });
    expect((await deliver(webhooks, SIGNING_SECRET, webhook)).status).to.equal(200);
    const teamKey = (await nthKey(3))!;
    await go('/keys');
    await page.getByRole('button', { name: 'Disconnect from the console' }).click();
    await page.waitForURL(/\/keys\?disconnected=1$/);
    await connect(teamKey);
    const rows = await eventually('the team key issued, in the log', async () => {
      await go('/audit');
      const actions = await page.locator('tr[data-action]').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-action')));
      return actions.includes('key.issued') ? actions : undefined;
    });
    expect(rows).to.include.members(['subscription.created', 'account.logged-in', 'account.password-changed']);
    expect(await page.content()).not.to.include(teamKey);
    await page.getByLabel('Show').selectOption('key.');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/\/audit\?action=key\.$/);
    const keyRows = await page.locator('tr[data-action]').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-action')));
    expect(keyRows.length).to.be.greaterThan(0);
    expect(keyRows.every((a) => a?.startsWith('key.'))).to.equal(true);
    await shot('audit');
    for (const viewport of Object.values(WIDTHS)) {
      await page.setViewportSize(viewport);
      const above = (await axeScan(page)).filter((v) => v.impact !== 'minor');
      expect(above, JSON.stringify(above)).to.deep.equal([]);
    }
  });
});
