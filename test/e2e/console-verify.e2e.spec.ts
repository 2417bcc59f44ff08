import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { type Browser, type BrowserContext, type Page, chromium } from 'playwright-core';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { freePort } from '../../deploy/local/processes.ts';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { accountsService } from '../../services/accounts/accounts.service.ts';
import { consoleService } from '../../services/console/console.service.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { mailerService } from '../../services/mailer/mailer.service.ts';
import { CHROMIUM_ARGS, sandboxByDefault } from '../../services/vision/browser/chromium-args.ts';
import { chromiumForTests } from '../integration/vision/chromium-under-test.ts';
import { useContractCheck } from '../support/contract-check.ts';
import { eventually, testEnv, testLogger } from '../support/env.ts';
import { mailTo } from '../support/mailpit.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';
import { WIDTHS, axeScan } from './console-pages.ts';

/**
 * The console's side of address verification in a real browser, on the real stack: a new customer's
 * account page says the address is not verified and waits; the welcome e-mail's link (read from
 * Mailpit), opened signed out, asks to log in and comes back; opening it changes nothing until the
 * confirm button's POST (with the session's CSRF token); the account page then says it is verified.
 * A resend from the page mails a new link.
 */
describe('the console’s address verification pages in a browser (e2e)', function () {
  this.timeout(120_000);
  let stack: StackEnv;
  let platform: RunningPlatform;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let consoleUrl: string;
  let accounts: string;
  const customer = { email: `verify-${randomUUID().slice(0, 8)}@example.test`, password: `pw-${randomUUID()}`, name: 'Vera' };

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    stack = await useStack();
    if (!stack.MAILPIT_URL) this.skip();
    const ports = { accounts: await freePort(), keys: await freePort(), console: await freePort() };
    consoleUrl = `http://127.0.0.1:${ports.console}`;
    accounts = `http://127.0.0.1:${ports.accounts}`;
    platform = await startServices(
      [accountsService, keysService, mailerService, consoleService],
      testEnv(stack, {
        ACCOUNTS_PORT: String(ports.accounts),
        KEYS_PORT: String(ports.keys),
        CONSOLE_PORT: String(ports.console),
        RAG_PORT: String(await freePort()),
        AUTH_URL: `http://127.0.0.1:${ports.keys}`,
        WEBHOOK_SECRET: 'ab'.repeat(32),
        KEY_ENCRYPTION_KEY: 'cd'.repeat(32),
        CONSOLE_SECRET: 'ef'.repeat(32),
        CONSOLE_PUBLIC_URL: consoleUrl,
      }),
      testLogger(),
    );
    browser = await chromium.launch({
      executablePath: chromiumForTests(),
      headless: true,
      chromiumSandbox: sandboxByDefault(),
      args: [...CHROMIUM_ARGS],
    });
    context = await browser.newContext({ viewport: WIDTHS.desktop });
    page = await context.newPage();
  });

  after(async () => {
    await context?.close();
    await browser?.close();
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
  });

  useContractCheck();

  const sessionToken = async (c: BrowserContext) => (await c.cookies()).find((x) => x.name === 'svc_session')?.value ?? '';
  const verified = async (c: BrowserContext) => {
    const res = await fetch(`${accounts}/auth/me`, { headers: { authorization: `Bearer ${await sessionToken(c)}` } });
    return ((await res.json()) as { emailVerified: boolean }).emailVerified;
  };
  const links = async () =>
    (await mailTo(stack.MAILPIT_URL, customer.email)).flatMap(
      (m) => new RegExp(`${consoleUrl.replaceAll('.', '\\.')}/verify\\?token=[A-Za-z0-9_-]{43}`).exec(m.Text) ?? [],
    );

  it('signs up, and the account page says the address is not verified, with the resend form', async () => {
    await page.goto(`${consoleUrl}/signup`);
    await page.getByLabel('Name').fill(customer.name);
    await page.getByLabel('E-mail').fill(customer.email);
    await page.getByLabel('Password').fill(customer.password);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL(/\/pricing/);
    await page.goto(`${consoleUrl}/account`);
    expect(await page.locator('[data-unverified]').count()).to.equal(1);
    expect(await page.locator('[data-unverified]').textContent()).to.match(/subscription bought with it without logging in waits/);
    expect(await page.getByRole('button', { name: 'Resend the link' }).count()).to.equal(1);
    expect(await verified(context)).to.equal(false);
  });

  it('opens the welcome e-mail’s link signed out: log in, back to the page, and only the confirm button verifies', async () => {
    const [link] = await eventually('the welcome e-mail’s link', async () => {
      const found = await links();
      return found.length > 0 ? found : undefined;
    });
    const fresh = await browser.newContext({ viewport: WIDTHS.phone });
    try {
      const other = await fresh.newPage();
      await other.goto(link!);
      expect(await other.getByRole('button', { name: 'Log in', exact: true }).count()).to.equal(1);
      await other.getByLabel('E-mail').fill(customer.email);
      await other.getByLabel('Password').fill(customer.password);
      await other.getByRole('button', { name: 'Log in', exact: true }).click();
      await other.waitForURL((u) => u.pathname === '/verify');
      // Opening the link changed nothing: a GET never verifies.
      expect(await verified(fresh)).to.equal(false);
      const violations = (await axeScan(other)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(violations, JSON.stringify(violations)).to.deep.equal([]);

      // The form without the session's CSRF token is refused, and verifies nothing.
      const cookie = (await fresh.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
      const token = new URL(link!).searchParams.get('token')!;
      const forged = await fetch(`${consoleUrl}/verify`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams({ csrf: 'forged', token }),
        redirect: 'manual',
      });
      expect(forged.status).to.equal(403);
      expect(await verified(fresh)).to.equal(false);

      await other.getByRole('button', { name: 'Confirm my address' }).click();
      await other.waitForURL(/\/account\?verified=1$/);
      expect(await other.getByRole('status').textContent()).to.equal('Your address is verified.');
      expect(await other.locator('[data-unverified]').count()).to.equal(0);
      expect(await verified(fresh)).to.equal(true);

      // The same link again: used, one refusal that says what to do.
      await other.goto(link!);
      expect(new URL(other.url()).pathname).to.equal('/verify');
      expect(await other.getByRole('status').textContent()).to.equal('Your address is verified.');
    } finally {
      await fresh.close();
    }
  });

  it('a resend from the account page mails a new link', async () => {
    const second = await browser.newContext();
    try {
      // Another account, unverified, asks for a new link from its page.
      const p = await second.newPage();
      const email = `resend-${randomUUID().slice(0, 8)}@example.test`;
      await p.goto(`${consoleUrl}/signup`);
      await p.getByLabel('Name').fill('Rex');
      await p.getByLabel('E-mail').fill(email);
      await p.getByLabel('Password').fill(customer.password);
      await p.getByRole('button', { name: 'Create account' }).click();
      await p.waitForURL(/\/pricing/);
      await p.goto(`${consoleUrl}/account`);
      await p.getByRole('button', { name: 'Resend the link' }).click();
      await p.waitForURL(/\/account\?sent=1$/);
      expect(await p.getByRole('status').textContent()).to.equal(`A new link is on its way to ${email}; earlier links no longer work.`);
      await eventually('the welcome and the new link', async () => {
        const mails = (await mailTo(stack.MAILPIT_URL, email)).filter((m) => /\/verify\?token=/.test(m.Text));
        return mails.length >= 2 ? true : undefined;
      });
    } finally {
      await second.close();
    }
  });
});
