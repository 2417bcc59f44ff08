import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { expect } from 'chai';
import { type Browser, type BrowserContext, type Page, type Request as BrowserRequest, chromium } from 'playwright-core';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { freePort } from '../../deploy/local/processes.ts';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { accountsService } from '../../services/accounts/accounts.service.ts';
import type { SubscriptionCreated } from '../../services/billing/events.ts';
import { CONSOLE_CSP } from '../../services/console/console.routes.ts';
import { consoleService } from '../../services/console/console.service.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { mailerService } from '../../services/mailer/mailer.service.ts';
import { CHROMIUM_ARGS, sandboxByDefault } from '../../services/vision/browser/chromium-args.ts';
import { chromiumForTests } from '../integration/vision/chromium-under-test.ts';
import { subscriptionCreated } from '../support/subscriptions.ts';
import { useContractCheck } from '../support/contract-check.ts';
import { eventually, testEnv, testLogger } from '../support/env.ts';
import { postJson } from '../support/http.ts';
import { keysMailedTo, mailTo } from '../support/mailpit.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';
import { WIDTHS, axeScan } from './console-pages.ts';

/** SVC_SCREENSHOTS=docs writes the README's screenshots of these pages into docs/images; otherwise they go to the test's folder. */
const SCREENSHOTS_TO_DOCS = process.env.SVC_SCREENSHOTS === 'docs';

/**
 * The console's team pages in a real browser, on the real stack (Kafka, FerretDB, Mailpit): an
 * owner with a team subscription invites an address from /team; the invitation's link, read from
 * Mailpit, is opened signed out by someone new, who signs up through the page's carried `next`,
 * joins and lands on /team; the owner sees them, changes their role and removes them, and their
 * mailed key is refused by POST /validate within a second; the used link then shows its refusal.
 * The steps build on each other, as in console.e2e.spec.ts.
 */
describe('the console’s team pages in a browser (e2e)', function () {
  this.timeout(120_000);
  let stack: StackEnv;
  let platform: RunningPlatform;
  let browser: Browser;
  let ownerContext: BrowserContext;
  let memberContext: BrowserContext;
  let ownerPage: Page;
  let memberPage: Page;
  let consoleUrl: string;
  let keys: string;
  let accounts: string;
  let elsewhere: Server;
  let elsewhereOrigin: string;
  let dir: string;
  const owner = { email: `owner-${randomUUID().slice(0, 8)}@example.test`, password: `pw-${randomUUID()}`, userId: '' };
  const member = { email: `member-${randomUUID().slice(0, 8)}@example.test`, password: 'correct horse battery' };
  const subscriptionId = `sub-${randomUUID()}`;
  let joinUrl = '';
  let token = '';
  let memberKey = '';
  /** An invitation for another address (then withdrawn): refused to the member's account. */
  let otherLink = '';
  /** Every request the invitee's browser made, to show where the token went. */
  const memberRequests: BrowserRequest[] = [];

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    stack = await useStack();
    if (!stack.MAILPIT_URL) this.skip();
    dir = mkdtempSync(join(resolve('.data'), `test-${process.pid}-console-team-`));
    const ports = { accounts: await freePort(), keys: await freePort(), console: await freePort() };
    consoleUrl = `http://127.0.0.1:${ports.console}`;
    keys = `http://127.0.0.1:${ports.keys}`;
    accounts = `http://127.0.0.1:${ports.accounts}`;
    platform = await startServices(
      [accountsService, keysService, mailerService, consoleService],
      testEnv(stack, {
        ACCOUNTS_PORT: String(ports.accounts),
        KEYS_PORT: String(ports.keys),
        CONSOLE_PORT: String(ports.console),
        RAG_PORT: String(await freePort()),
        AUTH_URL: keys,
        WEBHOOK_SECRET: 'ab'.repeat(32),
        KEY_ENCRYPTION_KEY: 'cd'.repeat(32),
        CONSOLE_SECRET: 'ef'.repeat(32),
        CONSOLE_PUBLIC_URL: consoleUrl,
      }),
      testLogger(),
    );
    // Another site (webmail.test, which the browser maps to 127.0.0.1: a site of its own) with the link on it, as a webmail shows it.
    elsewhere = createServer((req, res) => {
      const to = new URL(req.url ?? '/', 'http://x').searchParams.get('to') ?? '';
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(`<!doctype html><html lang="en"><title>Mail</title><a id="link" href="${to.replaceAll('"', '&quot;')}">Accept</a></html>`);
    });
    await new Promise<void>((r) => elsewhere.listen(0, '127.0.0.1', r));
    elsewhereOrigin = `http://webmail.test:${(elsewhere.address() as AddressInfo).port}`;

    // The owner: an account, and a team subscription billing links to it (its key by e-mail).
    const signup = await postJson(`${accounts}/auth/signup`, { email: owner.email, password: owner.password, name: 'Olga Owner' });
    expect(signup.status, signup.text).to.equal(201);
    owner.userId = (signup.body.user as { id: string }).id;
    const created: SubscriptionCreated = subscriptionCreated({ subscriptionId, userId: owner.userId, email: owner.email, tier: 'team' });
    await platform.runtime.publisher.publishOrdered([created]);
    await eventually('the owner’s key e-mail', async () =>
      (await keysMailedTo(stack.MAILPIT_URL, owner.email)).length > 0 ? true : undefined,
    );

    // The platform's flags, but for one more name the browser may resolve: the other site's.
    browser = await chromium.launch({
      executablePath: chromiumForTests(),
      headless: true,
      chromiumSandbox: sandboxByDefault(),
      args: [
        ...CHROMIUM_ARGS.filter((a) => !a.startsWith('--host-resolver-rules=')),
        '--host-resolver-rules=MAP webmail.test 127.0.0.1, MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
      ],
    });
    ownerContext = await browser.newContext({ viewport: WIDTHS.desktop });
    ownerPage = await ownerContext.newPage();
    memberContext = await browser.newContext({ viewport: WIDTHS.desktop });
    memberContext.on('request', (r) => memberRequests.push(r));
    memberPage = await memberContext.newPage();
  });

  after(async () => {
    await ownerContext?.close();
    await memberContext?.close();
    await browser?.close();
    await new Promise<void>((r) => (elsewhere ? elsewhere.close(() => r()) : r()));
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  useContractCheck();

  const go = async (page: Page, path: string, status = 200) => {
    const res = await page.goto(path.startsWith('http') ? path : `${consoleUrl}${path}`);
    expect(res?.status(), path).to.equal(status);
    return res!;
  };
  const shot = (page: Page, name: string) =>
    page.screenshot({
      path: join(SCREENSHOTS_TO_DOCS ? resolve('docs/images') : join(dir, 'screenshots'), `console-${name}.png`),
      fullPage: true,
    });
  const validate = async (apiKey: string) => (await postJson(`${keys}/validate`, { apiKey })).body.valid;
  const invitationTo = (address: string) =>
    eventually(`the invitation to ${address}`, async () =>
      (await mailTo(stack.MAILPIT_URL, address)).find((m) => m.Subject === 'You are invited to a team on svc'),
    );
  /** A signed-out browser's pre-session cookie and CSRF token, from the log-in page. */
  const preSession = async () => {
    const res = await fetch(`${consoleUrl}/login`);
    const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0]!;
    const csrf = /name="csrf" value="([^"]+)"/.exec(await res.text())![1]!;
    return { cookie, csrf };
  };

  it('sends a visitor who is not signed in from /team to log in, and back to /team after; a forged `next` goes nowhere else', async () => {
    const res = await fetch(`${consoleUrl}/team`, { redirect: 'manual' });
    expect(res.status).to.equal(303);
    expect(res.headers.get('location')).to.equal('/login?next=%2Fteam');

    // A crafted log-in form with another site in `next` lands on the console's own account page.
    for (const next of ['https://evil.example/', '//evil.example/', '/\\evil.example']) {
      const { cookie, csrf } = await preSession();
      const login = await fetch(`${consoleUrl}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams({ csrf, email: owner.email, password: owner.password, next }),
        redirect: 'manual',
      });
      expect(login.status, next).to.equal(303);
      expect(login.headers.get('location'), next).to.equal('/account');
    }

    await go(ownerPage, '/team?subscriptionId=x');
    expect(new URL(ownerPage.url()).pathname).to.equal('/login');
    await ownerPage.getByLabel('E-mail').fill(owner.email);
    await ownerPage.getByLabel('Password').fill(owner.password);
    await ownerPage.getByRole('button', { name: 'Log in', exact: true }).click();
    await ownerPage.waitForURL(/\/team$/);
    expect(await ownerPage.locator('nav[aria-label="Console"] a[aria-current="page"]').textContent()).to.equal('Team');
  });

  it('shows the owner their workspace and sends an invitation from the form; the e-mail links to the join page', async () => {
    await go(ownerPage, '/team');
    expect(await ownerPage.locator('[data-owner]').textContent()).to.equal(owner.email);
    expect(await ownerPage.locator('[data-my-role]').getAttribute('data-my-role')).to.equal('owner');
    expect(await ownerPage.getByText('No members yet.').count()).to.equal(1);
    // The owner may invite an admin; nobody offers the owner a "leave" button.
    expect(await ownerPage.getByLabel('Role').locator('option').allTextContents()).to.deep.equal(['member', 'admin']);
    expect(await ownerPage.getByRole('button', { name: 'Leave this team' }).count()).to.equal(0);

    await ownerPage.getByLabel('E-mail').fill(member.email);
    await ownerPage.getByLabel('Role').selectOption('member');
    await ownerPage.getByRole('button', { name: 'Send invitation' }).click();
    await ownerPage.waitForURL(/\/team\?subscriptionId=.+&done=invited$/);
    expect(await ownerPage.getByRole('status').textContent()).to.match(/invitation is on its way by e-mail/);
    const pending = ownerPage.locator(`tr[data-invitation="${member.email}"]`);
    expect(await pending.count()).to.equal(1);

    // An address already in the workspace is refused by the keys service, in its words; the form keeps the input.
    await ownerPage.getByLabel('E-mail').fill(owner.email);
    const [refused] = await Promise.all([
      ownerPage.waitForResponse((r) => new URL(r.url()).pathname === '/team/invite'),
      ownerPage.getByRole('button', { name: 'Send invitation' }).click(),
    ]);
    expect(refused.status()).to.equal(409);
    expect(await ownerPage.getByRole('alert').textContent()).to.equal('that address is already in this workspace');
    expect(await ownerPage.getByLabel('E-mail').inputValue()).to.equal(owner.email);

    const mail = await invitationTo(member.email);
    const link = new RegExp(`${consoleUrl.replaceAll('.', '\\.')}/team/join\\?token=([A-Za-z0-9_-]{43})`).exec(mail.Text);
    expect(link, mail.Text).to.not.equal(null);
    joinUrl = link![0];
    token = link![1]!;
  });

  it('refuses a team form without the session’s CSRF token, inviting nobody', async () => {
    const cookie = (await ownerContext.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const stranger = `csrf-${randomUUID().slice(0, 8)}@example.test`;
    for (const csrf of ['', 'forged-token']) {
      const res = await fetch(`${consoleUrl}/team/invite`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams({ csrf, subscriptionId, email: stranger, role: 'member' }),
        redirect: 'manual',
      });
      expect(res.status).to.equal(403);
    }
    const team = await fetch(`${keys}/team?subscriptionId=${subscriptionId}`, {
      headers: { authorization: `Bearer ${(await ownerContext.cookies()).find((c) => c.name === 'svc_session')!.value}` },
    });
    const invited = ((await team.json()) as { invitations: { email: string }[] }).invitations.map((i) => i.email);
    expect(invited).to.deep.equal([member.email]);
  });

  it('takes someone new from the link, signed out, through sign-up (the page carried back by `next`) to joining, and to /team', async () => {
    const res = await go(memberPage, joinUrl);
    expect(await res.headerValue('referrer-policy')).to.equal('no-referrer');
    expect(await res.headerValue('cache-control')).to.equal('no-store');
    expect(await res.headerValue('content-security-policy')).to.equal(CONSOLE_CSP);
    expect(await memberPage.getByRole('heading', { name: 'First, log in' }).count()).to.equal(1);
    await shot(memberPage, 'team-join');

    await memberPage.getByRole('link', { name: 'Create an account' }).click();
    await memberPage.waitForURL((u) => u.pathname === '/team/join' && u.searchParams.get('account') === 'new');
    await memberPage.getByLabel('Name').fill('Mia Member');
    await memberPage.getByLabel('E-mail').fill(member.email);
    await memberPage.getByLabel('Password').fill(member.password);
    await memberPage.getByRole('button', { name: 'Create account' }).click();
    // Back on the invitation's page, now signed in: the join button.
    await memberPage.waitForURL((u) => u.pathname === '/team/join' && u.searchParams.get('token') === token);
    expect(await memberPage.locator('main').textContent()).to.include(member.email);
    await memberPage.getByRole('button', { name: 'Join the team' }).click();
    await memberPage.waitForURL((u) => u.pathname === '/team' && u.searchParams.get('done') === 'joined');
    expect(await memberPage.getByRole('status').textContent()).to.match(/Your own API key for it is on its way by e-mail/);
    const row = memberPage.locator(`tr[data-member="${member.email}"]`);
    expect(await row.getAttribute('data-role')).to.equal('member');
    expect(await memberPage.locator('[data-owner]').textContent()).to.equal(owner.email);
    // A member sees no guest list and no invite form, and may leave.
    expect(await memberPage.getByRole('button', { name: 'Send invitation' }).count()).to.equal(0);
    expect(await memberPage.getByRole('heading', { name: 'Pending invitations' }).count()).to.equal(0);
    expect(await memberPage.getByRole('button', { name: 'Leave this team' }).count()).to.equal(1);

    memberKey = await eventually('the member’s key e-mail', async () => (await keysMailedTo(stack.MAILPIT_URL, member.email))[0]);
    expect(await validate(memberKey)).to.equal(true);
    expect(await memberPage.content()).not.to.include(memberKey);

    // The token went into no URL but the join page's own, and no request carried it in a Referer.
    const carrying = memberRequests.filter((r) => r.url().includes(token));
    expect(carrying.length).to.be.greaterThan(0);
    for (const r of carrying) expect(new URL(r.url()).pathname, r.url()).to.equal('/team/join');
    for (const r of memberRequests) expect((await r.allHeaders()).referer ?? '', r.url()).not.to.include(token);
  });

  it('lets the owner see the member with their key, change their role, and remove them: their key is refused within a second', async () => {
    await go(ownerPage, `/team?subscriptionId=${encodeURIComponent(subscriptionId)}`);
    const row = ownerPage.locator(`tr[data-member="${member.email}"]`);
    expect(await row.locator('code.key').textContent()).to.equal(`svc_…${memberKey.slice(-4)}`);
    expect(await ownerPage.locator(`tr[data-invitation="${member.email}"]`).count(), 'accepted: no longer pending').to.equal(0);

    await ownerPage.getByRole('button', { name: `Make admin ${member.email}` }).click();
    await ownerPage.waitForURL(/done=role$/);
    expect(await row.getAttribute('data-role')).to.equal('admin');
    // An admin now: the member's own page offers them the invite form, with members only.
    await go(memberPage, '/team');
    expect(await memberPage.getByRole('button', { name: 'Send invitation' }).count()).to.equal(1);
    expect(await memberPage.getByLabel('Role').count()).to.equal(0);

    await ownerPage.getByRole('button', { name: `Remove ${member.email}` }).click();
    await ownerPage.waitForURL(/done=removed$/);
    expect(await ownerPage.locator(`tr[data-member="${member.email}"]`).count()).to.equal(0);
    await eventually('the removed member’s key refused', async () => ((await validate(memberKey)) === false ? true : undefined), 1000);

    await go(memberPage, '/team');
    expect(await memberPage.locator('[data-team="none"]').count(), 'no longer in any workspace').to.equal(1);
  });

  it('answers a used invitation with its refusal page; a link of another site takes a signed-in member to the join form', async () => {
    // Followed from another site: the SameSite=Strict session comes along after one hop through the page itself.
    await go(memberPage, `${elsewhereOrigin}/?${new URLSearchParams({ to: joinUrl })}`);
    await memberPage.locator('#link').click();
    await memberPage.getByRole('button', { name: 'Join the team' }).waitFor();
    expect(new URL(memberPage.url()).pathname).to.equal('/team/join');

    const [answer] = await Promise.all([
      memberPage.waitForResponse((r) => new URL(r.url()).pathname === '/team/join' && r.request().method() === 'POST'),
      memberPage.getByRole('button', { name: 'Join the team' }).click(),
    ]);
    expect(answer.status()).to.equal(410);
    expect(await memberPage.locator('[data-refusal]').textContent()).to.equal(
      'This invitation was already used or withdrawn; ask for a new one.',
    );
    expect(await memberPage.locator('h1').textContent()).to.equal('This invitation cannot be used');
    for (const viewport of Object.values(WIDTHS)) {
      await memberPage.setViewportSize(viewport);
      expect(await axeScan(memberPage), `the refusal page at ${viewport.width}`).to.deep.equal([]);
    }
    await memberPage.setViewportSize(WIDTHS.desktop);

    // An invitation for someone else, opened by the member's account: for another address (404).
    await go(ownerPage, '/team');
    const other = `other-${randomUUID().slice(0, 8)}@example.test`;
    await ownerPage.getByLabel('E-mail').fill(other);
    await ownerPage.getByRole('button', { name: 'Send invitation' }).click();
    await ownerPage.waitForURL(/done=invited$/);
    otherLink = /\/team\/join\?token=[A-Za-z0-9_-]{43}/.exec((await invitationTo(other)).Text)![0];
    await go(memberPage, otherLink);
    const [refused] = await Promise.all([
      memberPage.waitForResponse((r) => new URL(r.url()).pathname === '/team/join' && r.request().method() === 'POST'),
      memberPage.getByRole('button', { name: 'Join the team' }).click(),
    ]);
    expect(refused.status()).to.equal(404);
    expect(await memberPage.locator('[data-refusal]').textContent()).to.match(/^This invitation is for another address/);

    // The owner withdraws it from the page: gone from the pending list.
    await go(ownerPage, '/team');
    await ownerPage.getByRole('button', { name: `Withdraw the invitation of ${other}` }).click();
    await ownerPage.waitForURL(/done=withdrawn$/);
    expect(await ownerPage.locator(`tr[data-invitation="${other}"]`).count()).to.equal(0);

    // A link cut short is not sent on: the page says so.
    await go(memberPage, '/team/join?token=short', 400);
    expect(await memberPage.locator('[data-refusal]').textContent()).to.match(/not a whole invitation link/);
  });

  it('lets a member leave from the page: back in by a new invitation, out again, their new key refused within a second', async () => {
    await go(ownerPage, '/team');
    await ownerPage.getByLabel('E-mail').fill(member.email);
    await ownerPage.getByRole('button', { name: 'Send invitation' }).click();
    await ownerPage.waitForURL(/done=invited$/);
    const again = await eventually('the second invitation to the member', async () => {
      const mails = (await mailTo(stack.MAILPIT_URL, member.email)).filter((m) => m.Subject === 'You are invited to a team on svc');
      return mails.length >= 2 ? mails[0] : undefined;
    });
    const link = /http:\/\/[^\s]+\/team\/join\?token=[A-Za-z0-9_-]{43}/.exec(again.Text)![0];
    expect(link).not.to.equal(joinUrl);
    await go(memberPage, link);
    await memberPage.getByRole('button', { name: 'Join the team' }).click();
    await memberPage.waitForURL(/done=joined$/);
    const secondKey = await eventually(
      'the member’s second key e-mail',
      async () => (await keysMailedTo(stack.MAILPIT_URL, member.email))[1],
    );
    expect(await validate(secondKey)).to.equal(true);

    await memberPage.getByRole('button', { name: 'Leave this team' }).click();
    await memberPage.waitForURL((u) => u.pathname === '/team' && u.searchParams.get('done') === 'left');
    expect(await memberPage.getByRole('status').textContent()).to.match(/You left the team/);
    expect(await memberPage.locator('[data-team="none"]').count()).to.equal(1);
    await eventually('the leaver’s key refused', async () => ((await validate(secondKey)) === false ? true : undefined), 1000);
    await go(ownerPage, '/team');
    expect(await ownerPage.locator(`tr[data-member="${member.email}"]`).count()).to.equal(0);
  });

  it('works with the keyboard alone on /team and /team/join', async () => {
    await go(ownerPage, '/team');
    const reached: string[] = [];
    for (let i = 0; i < 30; i++) {
      await ownerPage.keyboard.press('Tab');
      reached.push(String(await ownerPage.evaluate("document.activeElement.name || document.activeElement.textContent || ''")));
    }
    expect(reached).to.include.members(['Team', 'email', 'role', 'Send invitation']);

    const fresh = await browser.newContext({ viewport: WIDTHS.desktop });
    try {
      const p = await fresh.newPage();
      await go(p, joinUrl);
      const seen: string[] = [];
      for (let i = 0; i < 20; i++) {
        await p.keyboard.press('Tab');
        seen.push(String(await p.evaluate("document.activeElement.name || document.activeElement.textContent || ''")));
      }
      expect(seen).to.include.members(['email', 'password', 'Log in', 'Create an account']);
    } finally {
      await fresh.close();
    }
  });

  it('has no accessibility violation at all on /team and /team/join, at a phone and a desktop width (axe-core)', async () => {
    // The owner's page with a member and a pending invitation; the member's page; the join page in each state.
    const invited = async (address: string) => {
      await go(ownerPage, '/team');
      await ownerPage.getByLabel('E-mail').fill(address);
      await ownerPage.getByRole('button', { name: 'Send invitation' }).click();
      await ownerPage.waitForURL(/done=invited$/);
    };
    await invited(`pending-${randomUUID().slice(0, 8)}@example.test`);
    await invited(member.email);
    const third = await eventually('the third invitation to the member', async () => {
      const mails = (await mailTo(stack.MAILPIT_URL, member.email)).filter((m) => m.Subject === 'You are invited to a team on svc');
      return mails.length >= 3 ? mails[0] : undefined;
    });
    await go(memberPage, /http:\/\/[^\s]+\/team\/join\?token=[A-Za-z0-9_-]{43}/.exec(third.Text)![0]);
    await memberPage.getByRole('button', { name: 'Join the team' }).click();
    await memberPage.waitForURL(/done=joined$/);
    await go(ownerPage, '/team');
    expect(await ownerPage.locator('tr[data-member]').count(), 'a member to scan').to.equal(1);
    expect(await ownerPage.locator('tr[data-invitation]').count(), 'an invitation to scan').to.equal(1);
    await shot(ownerPage, 'team');
    const fresh = await browser.newContext({ viewport: WIDTHS.desktop });
    const out = await fresh.newPage();
    const found: string[] = [];
    try {
      for (const [width, viewport] of Object.entries(WIDTHS)) {
        for (const [who, p, path] of [
          ['owner', ownerPage, '/team'],
          ['signed out', out, joinUrl],
          ['signed out', out, `${joinUrl}&account=new`],
          ['signed out', out, '/team/join?token=short'],
          ['member', memberPage, '/team'],
          ['member', memberPage, joinUrl],
        ] as const) {
          await p.setViewportSize(viewport);
          await p.goto(path.startsWith('http') ? path : `${consoleUrl}${path}`);
          for (const v of await axeScan(p)) found.push(`${width} ${who} ${path}: ${v.impact} ${v.id} (${v.help}, ${v.nodes} nodes)`);
        }
        // The refusal page, as a POST answers it (an invitation for another address).
        await memberPage.setViewportSize(viewport);
        await memberPage.goto(`${consoleUrl}${otherLink}`);
        await memberPage.getByRole('button', { name: 'Join the team' }).click();
        await memberPage.locator('[data-refusal]').waitFor();
        for (const v of await axeScan(memberPage)) found.push(`${width} refusal: ${v.impact} ${v.id} (${v.help}, ${v.nodes} nodes)`);
      }
    } finally {
      await fresh.close();
    }
    expect(found).to.deep.equal([]);
  });
});
