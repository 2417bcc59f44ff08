import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { freePort } from '../../deploy/local/processes.ts';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { accountsService } from '../../services/accounts/accounts.service.ts';
import { consoleService } from '../../services/console/console.service.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { mailerService } from '../../services/mailer/mailer.service.ts';
import { launchChromiumForTests } from '../integration/vision/chromium-under-test.ts';
import { useContractCheck } from '../support/contract-check.ts';
import { eventually, testEnv, testLogger } from '../support/env.ts';
import { postJson } from '../support/http.ts';
import { keysMailedTo } from '../support/mailpit.ts';
import { type LocalOidcProvider, startOidcProvider } from '../support/oidc-provider.ts';
import { proveSsoDomain } from '../support/sso-domain-proof.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';
import { subscriptionCreated } from '../support/subscriptions.ts';
import { WIDTHS } from './console-pages.ts';

/**
 * An account single sign-on made has no password anyone knows, so before log-out revoked tokens it
 * could never end a session (POST /auth/password needs the current password). Here such an account,
 * made through a real OpenID Connect provider and the console in a real browser, logs out from the
 * console, and logs out everywhere: its tokens are refused at once by the accounts and keys services.
 */
describe('log-out of an account single sign-on made (e2e)', function () {
  this.timeout(120_000);
  let stack: StackEnv;
  let platform: RunningPlatform;
  let provider: LocalOidcProvider;
  let browser: Browser;
  let accounts: string;
  let keys: string;
  let consoleUrl: string;
  const domain = `out-${randomUUID().slice(0, 6)}.test`;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    stack = await useStack();
    if (!stack.MAILPIT_URL) this.skip();
    const ports = { accounts: await freePort(), keys: await freePort(), console: await freePort() };
    accounts = `http://127.0.0.1:${ports.accounts}`;
    keys = `http://127.0.0.1:${ports.keys}`;
    consoleUrl = `http://127.0.0.1:${ports.console}`;
    provider = await startOidcProvider({ redirectUri: `${accounts}/auth/sso/callback` });
    platform = await startServices(
      [accountsService, keysService, mailerService, consoleService],
      testEnv(stack, {
        ACCOUNTS_PORT: String(ports.accounts),
        KEYS_PORT: String(ports.keys),
        CONSOLE_PORT: String(ports.console),
        AUTH_URL: keys,
        ACCOUNTS_PUBLIC_URL: accounts,
        CONSOLE_PUBLIC_URL: consoleUrl,
        SSO_ALLOW_HTTP_ISSUERS: 'true',
        WEBHOOK_SECRET: 'ab'.repeat(32),
        KEY_ENCRYPTION_KEY: 'cd'.repeat(32),
        CONSOLE_SECRET: 'ef'.repeat(32),
      }),
      testLogger(),
    );
    // A team owner whose provider signs people of `domain` on.
    const email = `owner-${randomUUID().slice(0, 8)}@example.test`;
    const signup = await postJson(`${accounts}/auth/signup`, { email, password: `pw-${randomUUID()}`, name: 'Team Owner' });
    expect(signup.status, signup.text).to.equal(201);
    const ownerToken = signup.body.token as string;
    const subscriptionId = `sub-${randomUUID()}`;
    await platform.runtime.publisher.publishOrdered([
      subscriptionCreated({ subscriptionId, userId: (signup.body.user as { id: string }).id, email, tier: 'team' }),
    ]);
    await eventually(`the team key mailed to ${email}`, async () => (await keysMailedTo(stack.MAILPIT_URL, email))[0]);
    const sso = await fetch(`${keys}/team/sso`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${ownerToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        subscriptionId,
        issuer: provider.issuer,
        clientId: provider.clientId,
        clientSecret: provider.clientSecret,
        domains: [domain],
      }),
    });
    expect(sso.status, await sso.text()).to.equal(200);
    await proveSsoDomain({ keysUrl: keys, mailpitUrl: stack.MAILPIT_URL, ownerToken, subscriptionId, domain });
    browser = await launchChromiumForTests();
  });

  after(async () => {
    await browser?.close();
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
    await provider?.stop();
  });

  useContractCheck();

  const answers = async (token: string) =>
    Promise.all(
      [`${accounts}/auth/me`, `${keys}/teams`].map(
        async (url) => (await fetch(url, { headers: { authorization: `Bearer ${token}` } })).status,
      ),
    );

  /** Signs `person` on from the console's log-in page in a browser context of its own; its session token. */
  async function signOn(person: string, next?: string): Promise<{ context: BrowserContext; page: Page; token: string }> {
    const context = await browser.newContext({ viewport: WIDTHS.desktop });
    const page = await context.newPage();
    await page.goto(`${consoleUrl}/login${next ? `?${new URLSearchParams({ next })}` : ''}`);
    await page.getByLabel('Work address').fill(person);
    await page.getByRole('button', { name: 'Continue with SSO' }).click();
    await page.waitForURL((url) => url.origin === provider.issuer);
    await page.locator('input[name="login"]').fill(person);
    await page.locator('input[name="password"]').fill('any password');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL((url) => url.href.startsWith(`${consoleUrl}/sso/complete`));
    // /sso/complete answers with a redirect to /account: a test's own navigation started before that
    // one lands is interrupted by it.
    await page.waitForURL((url) => url.href === `${consoleUrl}${next ?? '/account'}`);
    const token = await eventually(
      'the session cookie',
      async () => (await context.cookies()).find((c) => c.name === 'svc_session')?.value,
    );
    return { context, page, token };
  }

  it('a sign-on started on the way to a page that needs a log-in (a consent page, the assistants) lands on that page, and a crafted way on stays in the console', async () => {
    const person = `ana-${randomUUID().slice(0, 6)}@${domain}`;
    const { context, page } = await signOn(person, '/assistants');
    try {
      expect(new URL(page.url()).pathname).to.equal('/assistants');
    } finally {
      await context.close();
    }
    // An address outside the console as the way on is dropped before the form carries it.
    const crafted = await browser.newContext({ viewport: WIDTHS.desktop });
    try {
      const p = await crafted.newPage();
      await p.goto(`${consoleUrl}/login?${new URLSearchParams({ next: '//evil.example/x' })}`);
      expect(await p.locator('form[action="/login/sso"] input[name="next"]').count()).to.equal(0);
    } finally {
      await crafted.close();
    }
  });

  it('logs out from the console: the token is refused at once at /auth/me and GET /teams', async () => {
    const person = `ana-${randomUUID().slice(0, 6)}@${domain}`;
    const { context, page, token } = await signOn(person);
    try {
      // Made by the sign-on: no password anyone knows.
      const made = await platform.runtime.mongo.db.collection('accounts').findOne({ _id: person as never });
      expect(made?.sso?.subscriptionId).to.be.a('string');
      expect(await answers(token)).to.deep.equal([200, 200]);
      await page.goto(`${consoleUrl}/account`);
      await page.getByRole('button', { name: /^Log out Ana/ }).click();
      await page.waitForURL(/\/login\?out=1$/);
      expect(await answers(token)).to.deep.equal([401, 401]);
    } finally {
      await context.close();
    }
  });

  it('logs out everywhere from the account page: the sessions of two browsers end', async () => {
    const person = `bo-${randomUUID().slice(0, 6)}@${domain}`;
    const first = await signOn(person);
    const second = await signOn(person);
    try {
      expect(await answers(second.token)).to.deep.equal([200, 200]);
      await first.page.goto(`${consoleUrl}/account`);
      await first.page.getByRole('button', { name: 'Log out everywhere' }).click();
      await first.page.waitForURL(/\/login\?out=all$/);
      expect(await first.page.getByRole('status').textContent()).to.match(/logged out everywhere/);
      expect(await answers(first.token)).to.deep.equal([401, 401]);
      expect(await answers(second.token)).to.deep.equal([401, 401]);
    } finally {
      await first.context.close();
      await second.context.close();
    }
  });
});
