import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { freePort } from '../../deploy/local/processes.ts';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { projectionCollection } from '../../events/collections.ts';
import { accountsService } from '../../services/accounts/accounts.service.ts';
import type { SubscriptionCreated } from '../../services/billing/events.ts';
import { CONSOLE_CSP } from '../../services/console/console.routes.ts';
import { consoleService } from '../../services/console/console.service.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { mailerService } from '../../services/mailer/mailer.service.ts';
import { workspacesProjection } from '../../services/teams/workspaces.projection.ts';
import { launchChromiumForTests } from '../integration/vision/chromium-under-test.ts';
import { subscriptionCreated } from '../support/subscriptions.ts';
import { useContractCheck } from '../support/contract-check.ts';
import { eventually, testEnv, testLogger } from '../support/env.ts';
import { keysMailedTo, mailTo } from '../support/mailpit.ts';
import { postJson } from '../support/http.ts';
import { type LocalOidcProvider, startOidcProvider } from '../support/oidc-provider.ts';
import { confirmDomainProof, domainProofTokenMailedTo, proveSsoDomain, requestDomainProof } from '../support/sso-domain-proof.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';
import { WIDTHS, axeScan } from './console-pages.ts';

interface Owner {
  email: string;
  userId: string;
  token: string;
  subscriptionId: string;
  apiKey: string;
}

/**
 * A team's OpenID Connect single sign-on end to end: the services on real Kafka, FerretDB and
 * Mailpit, a real OpenID Connect provider (oidc-provider, in this process) and a real browser. The
 * owner configures the provider for acme.test; a new person signs on from the console's log-in page,
 * lands signed in, is a member with her own key by e-mail; an unverified address, an address of
 * another domain, a forged or replayed state and a reused one-time code are each refused with nothing
 * made; the team's audit log has the configuration and the sign-on.
 */
describe('team single sign-on with OpenID Connect (e2e)', function () {
  this.timeout(120_000);
  let stack: StackEnv;
  let platform: RunningPlatform;
  let provider: LocalOidcProvider;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let accounts: string;
  let keys: string;
  let consoleUrl: string;
  let owner: Owner;
  const domain = 'acme.test';
  const ana = `ana-${randomUUID().slice(0, 6)}@${domain}`;
  let anaCode = '';
  let anaCallback = '';
  let anaToken = '';

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
    owner = await teamOwner();
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
  });

  useContractCheck();

  const call = async (method: string, url: string, headers: Record<string, string>, body?: unknown) => {
    const res = await fetch(url, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, text, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };
  const asOwner = () => ({ authorization: `Bearer ${owner.token}` });
  const account = (email: string) => platform.runtime.mongo.db.collection('accounts').findOne({ _id: email as never });
  const workspace = async () =>
    (await projectionCollection(platform.runtime.mongo.db, workspacesProjection.collection)).findOne({
      _id: owner.subscriptionId as never,
    });

  async function teamOwner(email = `owner-${randomUUID().slice(0, 8)}@example.test`, password = `pw-${randomUUID()}`): Promise<Owner> {
    const signup = await postJson(`${accounts}/auth/signup`, { email, password, name: 'Team Owner' });
    expect(signup.status, signup.text).to.equal(201);
    const userId = (signup.body.user as { id: string }).id;
    const subscriptionId = `sub-${randomUUID()}`;
    const created: SubscriptionCreated = subscriptionCreated({ subscriptionId, userId, email, tier: 'team' });
    await platform.runtime.publisher.publishOrdered([created]);
    const apiKey = await eventually(`the team key mailed to ${email}`, async () => (await keysMailedTo(stack.MAILPIT_URL, email))[0]);
    return { email, userId, token: signup.body.token as string, subscriptionId, apiKey };
  }

  /** From the console's log-in page to the provider's log-in form, as a person would. */
  async function startAtConsole(workEmail: string, p: Page = page): Promise<void> {
    const res = await p.goto(`${consoleUrl}/login`);
    expect(await res?.headerValue('content-security-policy')).to.equal(CONSOLE_CSP);
    await p.getByLabel('Work address').fill(workEmail);
    await p.getByRole('button', { name: 'Continue with SSO' }).click();
    await p.waitForURL((url) => url.origin === provider.issuer);
  }

  /** The provider's development log-in (any password) and consent. */
  async function signInAtProvider(login: string, p: Page = page): Promise<void> {
    await p.locator('input[name="login"]').fill(login);
    await p.locator('input[name="password"]').fill('any password');
    await p.getByRole('button', { name: 'Sign-in' }).click();
    await p.getByRole('button', { name: 'Continue' }).click();
  }

  /** Where a refused sign-on lands: the console's error page, with the refusal's status. */
  async function refusedWith(action: () => Promise<unknown>, status: number, words: RegExp): Promise<void> {
    const [landed] = await Promise.all([page.waitForResponse((r) => r.url().startsWith(`${consoleUrl}/sso/complete`)), action()]);
    expect(landed.status(), await landed.text()).to.equal(status);
    await page.waitForURL((url) => url.pathname === '/sso/complete');
    expect(await page.locator('main').textContent()).to.match(words);
    expect((await context.cookies()).some((c) => c.name === 'svc_session')).to.equal(false);
  }

  it('lets the owner configure SSO for acme.test: the issuer discovered first, the secret never answered nor stored in clear', async () => {
    const body = {
      subscriptionId: owner.subscriptionId,
      issuer: provider.issuer,
      clientId: provider.clientId,
      clientSecret: provider.clientSecret,
      domains: ['ACME.test'],
    };
    // An issuer that does not answer as an OpenID Connect provider is refused, and nothing is recorded.
    const dead = await call('PUT', `${keys}/team/sso`, asOwner(), { ...body, issuer: `http://127.0.0.1:${await freePort()}` });
    expect(dead.status, dead.text).to.equal(422);
    expect(dead.body.code).to.equal('ISSUER_NOT_DISCOVERED');
    expect(dead.text).not.to.include(provider.clientSecret);
    expect((await workspace())?.sso ?? null).to.equal(null);

    const put = await call('PUT', `${keys}/team/sso`, asOwner(), body);
    expect(put.status, put.text).to.equal(200);
    expect(put.body.sso).to.deep.include({
      issuer: provider.issuer,
      clientId: provider.clientId,
      domains: [domain],
      configuredBy: owner.userId,
    });
    expect(put.body.redirectUri).to.equal(`${accounts}/auth/sso/callback`);
    const read = await call('GET', `${keys}/team/sso?subscriptionId=${owner.subscriptionId}`, asOwner());
    expect(read.status).to.equal(200);
    expect(read.body.sso).to.deep.equal(put.body.sso);
    for (const text of [put.text, read.text, JSON.stringify(await workspace())]) expect(text).not.to.include(provider.clientSecret);
    expect((await workspace())?.sso?.encryptedClientSecret).to.be.a('string');
    // Configured is not proven: no sign-on starts for the domain until the owner proves it.
    const unproven = await fetch(`${accounts}/auth/sso/start?email=${encodeURIComponent(ana)}&binding=${'b'.repeat(43)}`, {
      redirect: 'manual',
    });
    expect(new URL(unproven.headers.get('location')!).searchParams.get('error')).to.equal('no_team');
    await proveSsoDomain({
      keysUrl: keys,
      mailpitUrl: stack.MAILPIT_URL,
      ownerToken: owner.token,
      subscriptionId: owner.subscriptionId,
      domain,
    });
    expect((await workspace())?.sso?.provenDomains).to.deep.equal([domain]);

    // Nobody else's: a stranger is told there is no such workspace.
    const stranger = await postJson(`${accounts}/auth/signup`, {
      email: `x-${randomUUID().slice(0, 6)}@example.test`,
      password: `pw-${randomUUID()}`,
      name: 'X',
    });
    const theirs = await call('PUT', `${keys}/team/sso`, { authorization: `Bearer ${stranger.body.token as string}` }, body);
    expect(theirs.status).to.equal(404);
  });

  it('signs a new person on from the console: signed in, her account made, a member of the team, her key by e-mail', async () => {
    page.on('request', (r) => {
      if (r.url().startsWith(`${accounts}/auth/sso/callback`)) anaCallback = r.url();
      const m = /\/sso\/complete\?code=([\w-]+)/.exec(r.url());
      if (m) anaCode = m[1]!;
    });
    expect(await account(ana)).to.equal(null);
    await startAtConsole(ana);
    // The flow is in a sealed cookie on the callback's path only.
    const flow = (await context.cookies()).find((c) => c.name === 'svc_sso_flow');
    expect(flow).to.include({ httpOnly: true, secure: true, sameSite: 'Lax', path: '/auth/sso/callback' });
    await signInAtProvider(ana);
    await page.waitForURL(`${consoleUrl}/account`);
    expect(await page.locator('main').textContent()).to.include(ana);
    const session = (await context.cookies()).find((c) => c.name === 'svc_session');
    expect(session).to.include({ httpOnly: true, secure: true, sameSite: 'Strict' });
    anaToken = session!.value;
    expect(anaCode).not.to.equal('');
    expect(anaCallback).to.match(/[?&]state=/);

    const made = await account(ana);
    // The provider identity it was made for, recorded at its making: what its later sign-ons match.
    expect(made?.sso).to.deep.equal({ subscriptionId: owner.subscriptionId, issuer: provider.issuer, subject: ana });
    // No usable password: the sign-up's hash is of a secret nobody saw.
    const guess = await postJson(`${accounts}/auth/login`, { email: ana, password: 'any password' });
    expect(guess.status).to.equal(401);
    const team = await call('GET', `${keys}/team?subscriptionId=${owner.subscriptionId}`, asOwner());
    expect(team.status, team.text).to.equal(200);
    const members = team.body.members as { email: string; role: string; via: string }[];
    expect(members.find((m) => m.email === ana)).to.include({ role: 'member', via: 'sso' });
    // Made through the sign-up's own path: the welcome e-mail follows account.registered.
    await eventually(`the welcome e-mail to ${ana}`, async () =>
      (await mailTo(stack.MAILPIT_URL, ana)).find((m) => /^Welcome to svc/.test(m.Subject)),
    );
    const memberKey = await eventually(`the member key mailed to ${ana}`, async () => (await keysMailedTo(stack.MAILPIT_URL, ana))[0]);
    expect(memberKey).to.match(/^svc_[A-Za-z0-9]{33}$/);

    // Signing on again finds the same account and the same membership.
    await context.clearCookies();
    await startAtConsole(ana);
    await signInAtProvider(ana);
    await page.waitForURL(`${consoleUrl}/account`);
    const again = await call('GET', `${keys}/team?subscriptionId=${owner.subscriptionId}`, asOwner());
    expect((again.body.members as { email: string }[]).filter((m) => m.email === ana)).to.have.length(1);
  });

  it('refuses a one-time code used once already, and a replayed callback', async () => {
    const reused = await call('POST', `${accounts}/auth/sso/exchange`, {}, { code: anaCode, binding: 'any' });
    expect(reused.status).to.equal(401);
    expect(reused.body.code).to.equal('INVALID_CODE');
    await context.clearCookies();
    const page2 = await page.goto(`${consoleUrl}/sso/complete?code=${anaCode}`);
    expect(page2?.status()).to.equal(400);
    expect((await context.cookies()).some((c) => c.name === 'svc_session')).to.equal(false);
    // The provider's answer again: its flow cookie is gone, so it finishes nothing.
    await refusedWith(() => page.goto(anaCallback), 400, /not started in this browser/);
  });

  it('refuses another browser’s code (login CSRF): a link to someone else’s sign-on signs nobody in', async () => {
    // The attacker signs on with their own account, and keeps the code their console never redeemed.
    const attacker = await browser.newContext();
    const attackerPage = await attacker.newPage();
    let code = '';
    attackerPage.on('request', (r) => {
      const m = /\/sso\/complete\?code=([\w-]+)/.exec(r.url());
      if (m) code = m[1]!;
    });
    const zed = `zed-${randomUUID().slice(0, 6)}@${domain}`;
    await startAtConsole(zed, attackerPage);
    await attacker.clearCookies({ name: 'svc_sso_binding' });
    await signInAtProvider(zed, attackerPage);
    await attackerPage.waitForURL((url) => url.pathname === '/sso/complete');
    await attacker.close();
    expect(code).to.match(/^[\w-]{43}$/);
    // The victim has a sign-on of her own under way, and follows the attacker's link.
    await context.clearCookies();
    await startAtConsole(ana);
    const res = await page.goto(`${consoleUrl}/sso/complete?code=${code}`);
    expect(res?.status()).to.equal(401);
    expect((await context.cookies()).some((c) => c.name === 'svc_session')).to.equal(false);
    // And the attempt used it up.
    expect((await call('POST', `${accounts}/auth/sso/exchange`, {}, { code, binding: 'any' })).status).to.equal(401);
  });

  it('refuses a forged state, even with a good code from the provider: nothing is made', async () => {
    await context.clearCookies();
    const mallory = `mallory-${randomUUID().slice(0, 6)}@${domain}`;
    await startAtConsole(mallory);
    // The provider's real answer (a good code), its state swapped on the way back. A redirect is not
    // routed by the browser, so the consent form's answer is followed here up to the provider's
    // redirect to the callback, whose state is then replaced.
    const consent = `${provider.issuer}/interaction/*`;
    let forged = '';
    await page.route(consent, async (route) => {
      if (route.request().method() !== 'POST' || !route.request().postData()?.includes('prompt=consent')) return route.continue();
      let location = (await route.fetch({ maxRedirects: 0 })).headers().location ?? '';
      while (location && !location.startsWith(`${accounts}/auth/sso/callback`)) {
        location = (await context.request.get(new URL(location, provider.issuer).href, { maxRedirects: 0 })).headers().location ?? '';
      }
      const url = new URL(location);
      expect(url.searchParams.get('code')).to.be.a('string');
      url.searchParams.set('state', 'forged-state');
      forged = url.href;
      return route.fulfill({ status: 303, headers: { location: forged } });
    });
    await refusedWith(() => signInAtProvider(mallory), 400, /not for the sign-on this browser started/);
    await page.unroute(consent);
    expect(forged).to.match(/[?&]code=[^&]+/);
    expect(await account(mallory)).to.equal(null);
    // A made-up answer with no flow behind it at all.
    await refusedWith(
      () => page.goto(`${accounts}/auth/sso/callback?code=forged-code&state=forged-state&iss=${encodeURIComponent(provider.issuer)}`),
      400,
      /not started in this browser/,
    );
  });

  it('refuses an address the provider has not verified, and one of another domain: no account, no member', async () => {
    const ben = `ben-${randomUUID().slice(0, 6)}@${domain}`;
    provider.unverified(ben);
    await context.clearCookies();
    await startAtConsole(ben);
    await refusedWith(() => signInAtProvider(ben), 403, /has not verified your e-mail address/);
    expect(await account(ben)).to.equal(null);

    const eve = `eve-${randomUUID().slice(0, 6)}@other.test`;
    await context.clearCookies();
    await startAtConsole(`eve@${domain}`);
    await refusedWith(() => signInAtProvider(eve), 403, /not of one of your team's domains/);
    expect(await account(eve)).to.equal(null);
    const members = ((await workspace())?.members ?? []) as { email: string }[];
    const emails = members.map((m) => m.email);
    expect(emails).to.include(ana);
    expect(emails).not.to.include(ben);
    expect(emails).not.to.include(eve);
  });

  it('refuses an existing account that is not in the team (it could predate the team’s claim on the domain): no membership', async () => {
    const carl = `carl-${randomUUID().slice(0, 6)}@${domain}`;
    const signup = await postJson(`${accounts}/auth/signup`, { email: carl, password: `pw-${randomUUID()}`, name: 'Carl' });
    expect(signup.status).to.equal(201);
    await context.clearCookies();
    await startAtConsole(carl);
    // Words that do not say an account exists: what any sign-on this provider may not open is told.
    await refusedWith(() => signInAtProvider(carl), 403, /not linked to an svc account.*log in the ordinary way and link/);
    const members = ((await workspace())?.members ?? []) as { email: string }[];
    expect(members.map((m) => m.email)).not.to.include(carl);
  });

  /** An account with a password at the team's domain, owning a team subscription of its own, then a member of the owner's team. */
  let victim: Owner & { password: string };
  const codesFor = (userId: string) => platform.runtime.mongo.db.collection('sso_codes').countDocuments({ userId });
  // Those in force (an unlinked one is kept, marked, until its event is out).
  const identitiesOf = (userId: string) =>
    platform.runtime.mongo.db
      .collection('sso_identities')
      .find({ userId, unlinkedAt: { $exists: false } })
      .toArray();

  /** The owner invites V and V accepts with its password session, as the invitation e-mail's link would. */
  async function victimJoins(): Promise<void> {
    const invited = await call('POST', `${keys}/team/invitations`, asOwner(), {
      subscriptionId: owner.subscriptionId,
      email: victim.email,
      role: 'member',
    });
    expect(invited.status, invited.text).to.equal(201);
    const mail = await eventually(`the invitation to ${victim.email}`, async () =>
      (await mailTo(stack.MAILPIT_URL, victim.email)).find((m) => m.MessageID.includes(invited.body.invitationId as string)),
    );
    const token = /\/team\/join\?token=([A-Za-z0-9_-]+)/.exec(mail.Text)![1]!;
    const accepted = await call('POST', `${keys}/team/invitations/accept`, { authorization: `Bearer ${victim.token}` }, { token });
    expect(accepted.status, accepted.text).to.equal(200);
  }

  it('a hostile owner: its provider asserting a member’s verified address, under a subject it chose, opens nothing of the member’s', async () => {
    const password = `pw-${randomUUID()}`;
    victim = { ...(await teamOwner(`v-${randomUUID().slice(0, 6)}@${domain}`, password)), password };
    // The owner invites V, and V joins with its password session: V is a member of the owner's team.
    await victimJoins();
    const members = ((await workspace())?.members ?? []) as { userId: string }[];
    expect(members.map((m) => m.userId)).to.include(victim.userId);

    // The owner's provider says "this is V, verified", under a subject of the owner's choosing, and under V's own address as subject.
    for (const subject of [`hostile-${randomUUID().slice(0, 8)}`, victim.email]) {
      provider.assertEmail(subject, victim.email);
      await context.clearCookies();
      const codes: string[] = [];
      const seen = (r: { url(): string }) => {
        const m = /\/sso\/complete\?code=([\w-]+)/.exec(r.url());
        if (m) codes.push(m[1]!);
      };
      page.on('request', seen);
      await startAtConsole(victim.email);
      await refusedWith(() => signInAtProvider(subject), 403, /not linked to an svc account.*log in the ordinary way and link/);
      page.off('request', seen);
      // No code was issued at all, so POST /auth/sso/exchange has nothing to turn into V's session.
      expect(codes, subject).to.deep.equal([]);
    }
    expect(await codesFor(victim.userId)).to.equal(0);
    expect(await identitiesOf(victim.userId)).to.deep.equal([]);
    // V's own workspace is as V left it (nobody invited, nobody joined) and V's key answers for V only.
    const own = await call('GET', `${keys}/team?subscriptionId=${victim.subscriptionId}`, { authorization: `Bearer ${victim.token}` });
    expect(own.status, own.text).to.equal(200);
    expect(own.body.members).to.deep.equal([]);
    expect(own.body.invitations).to.deep.equal([]);
    const validated = await call('POST', `${keys}/validate`, {}, { apiKey: victim.apiKey });
    expect(validated.body.valid).to.equal(true);
  });

  it('links V’s account only after V logs in with its password; then that identity opens V, another subject with V’s address does not', async () => {
    const vSubject = `v-at-idp-${randomUUID().slice(0, 8)}`;
    provider.assertEmail(vSubject, victim.email);
    // No session, no link.
    const anonymous = await call('POST', `${accounts}/auth/sso/link/start`, {}, { binding: 'b'.repeat(43) });
    expect(anonymous.status).to.equal(401);

    const own = await browser.newContext({ viewport: WIDTHS.desktop });
    const p = await own.newPage();
    try {
      await p.goto(`${consoleUrl}/login`);
      await p.getByLabel('E-mail', { exact: true }).fill(victim.email);
      await p.getByLabel('Password').fill(victim.password);
      await p.getByRole('button', { name: 'Log in', exact: true }).click();
      await p.waitForURL(`${consoleUrl}/account`);
      await p.getByRole('link', { name: "Your team's sign-on" }).click();
      await p.waitForURL(`${consoleUrl}/account/sso`);
      expect(await p.locator('main').textContent()).to.include('No team sign-on is linked');
      await p.getByRole('button', { name: "Link your team's sign-on" }).click();
      await p.waitForURL((url) => url.origin === provider.issuer);
      await signInAtProvider(vSubject, p);
      await p.waitForURL((url) => url.pathname === '/account/sso' && url.search === '?done=linked');
      expect(await p.locator('main').textContent()).to.include(provider.issuer);
      const above = (await axeScan(p)).filter((v) => v.impact !== 'minor');
      expect(above, JSON.stringify(above)).to.deep.equal([]);
    } finally {
      await own.close();
    }
    const linked = await identitiesOf(victim.userId);
    expect(linked.map(({ issuer, subject, via, subscriptionId }) => ({ issuer, subject, via, subscriptionId }))).to.deep.equal([
      { issuer: provider.issuer, subject: vSubject, via: 'link', subscriptionId: owner.subscriptionId },
    ]);

    // That identity now opens V.
    await context.clearCookies();
    await startAtConsole(victim.email);
    await signInAtProvider(vSubject);
    await page.waitForURL(`${consoleUrl}/account`);
    expect(await page.locator('main').textContent()).to.include(victim.email);
    // Another subject with V's verified address still does not.
    const other = `hostile-${randomUUID().slice(0, 8)}`;
    provider.assertEmail(other, victim.email);
    await context.clearCookies();
    await startAtConsole(victim.email);
    await refusedWith(() => signInAtProvider(other), 403, /not linked to an svc account/);

    // V's own audit log (V's team key) has the link and the sign-on, naming the team it came through.
    const mine = await eventually("the link and the sign-on in V's own audit log", async () => {
      const res = await call('GET', `${keys}/audit`, { 'x-api-key': victim.apiKey });
      const list = (res.body.entries ?? []) as { action: string; userId: string | null; details: Record<string, unknown> }[];
      const link = list.find((e) => e.action === 'account.sso-linked');
      const signOn = list.find((e) => e.action === 'account.logged-in' && e.details.method === 'sso');
      return link && signOn ? { link, signOn } : undefined;
    });
    expect(mine.link).to.deep.include({ userId: victim.userId });
    expect(mine.link.details).to.include({ team: owner.subscriptionId, issuer: provider.issuer, via: 'link' });
    expect(mine.signOn.details).to.include({ team: owner.subscriptionId });

    // Removed from the team, V is opened by the team's provider no more (and not joined again), link or not.
    const removed = await call('DELETE', `${keys}/team/members/${victim.userId}?subscriptionId=${owner.subscriptionId}`, asOwner());
    expect(removed.status, removed.text).to.equal(204);
    await context.clearCookies();
    await startAtConsole(victim.email);
    await refusedWith(() => signInAtProvider(vSubject), 403, /not linked to an svc account/);
    expect((((await workspace())?.members ?? []) as { userId: string }[]).map((m) => m.userId)).not.to.include(victim.userId);
    await victimJoins();

    // V unlinks it: the owner's provider opens V no more.
    const asV = { authorization: `Bearer ${victim.token}` };
    const links = await call('GET', `${accounts}/auth/sso/links`, asV);
    expect(links.status, links.text).to.equal(200);
    const [only] = links.body.links as { id: string; via: string }[];
    expect(only?.via).to.equal('link');
    // Nobody else's to remove: the owner is told there is no such link.
    expect((await call('DELETE', `${accounts}/auth/sso/links/${only!.id}`, asOwner())).status).to.equal(404);
    expect((await call('DELETE', `${accounts}/auth/sso/links/${only!.id}`, asV)).status).to.equal(204);
    expect(await identitiesOf(victim.userId)).to.deep.equal([]);
    await context.clearCookies();
    await startAtConsole(victim.email);
    await refusedWith(() => signInAtProvider(vSubject), 403, /not linked to an svc account/);
  });

  it('links nothing from a leaked link ticket: another browser ends at the console without the binding, and its code is refused', async () => {
    // V's session starts a link; its ticket reaches the owner (a leak), who runs the provider.
    const started = await call(
      'POST',
      `${accounts}/auth/sso/link/start`,
      { authorization: `Bearer ${victim.token}` },
      { binding: 'c'.repeat(43) },
    );
    expect(started.status, started.text).to.equal(200);
    const location = started.body.location as string;
    expect(location).to.match(/\/auth\/sso\/start\?link=/);
    const stolenSubject = `stolen-${randomUUID().slice(0, 8)}`;
    provider.assertEmail(stolenSubject, victim.email);
    const attacker = await browser.newContext();
    const p = await attacker.newPage();
    let code = '';
    p.on('request', (r) => {
      const m = /\/sso\/complete\?code=([\w-]+)&link=1/.exec(r.url());
      if (m) code = m[1]!;
    });
    try {
      await p.goto(location);
      await p.waitForURL((url) => url.origin === provider.issuer);
      const [landed] = await Promise.all([
        p.waitForResponse((r) => r.url().startsWith(`${consoleUrl}/sso/complete`)),
        signInAtProvider(stolenSubject, p),
      ]);
      // The console has no binding secret in this browser: nothing is finished.
      expect(landed.status()).to.equal(400);
    } finally {
      await attacker.close();
    }
    expect(code).to.match(/^[\w-]{43}$/);
    const finish = await call('POST', `${accounts}/auth/sso/link/finish`, {}, { code, binding: 'c'.repeat(43) });
    expect(finish.status).to.equal(401);
    expect(await identitiesOf(victim.userId)).to.deep.equal([]);
  });

  it('refuses to link an account the provider names by another address, and one not in the team: the owner of the account is told why', async () => {
    /** A link started with this token, answered at the provider as `subject`; where the browser lands. */
    const linkAs = async (token: string, subject: string) => {
      const started = await call(
        'POST',
        `${accounts}/auth/sso/link/start`,
        { authorization: `Bearer ${token}` },
        { binding: 'd'.repeat(43) },
      );
      expect(started.status, started.text).to.equal(200);
      const other = await browser.newContext();
      const p = await other.newPage();
      try {
        await p.goto(started.body.location as string);
        await p.waitForURL((url) => url.origin === provider.issuer);
        const [landed] = await Promise.all([
          p.waitForResponse((r) => r.url().startsWith(`${consoleUrl}/sso/complete`)),
          signInAtProvider(subject, p),
        ]);
        return { status: landed.status(), error: new URL(landed.url()).searchParams.get('error') };
      } finally {
        await other.close();
      }
    };
    // V, a member, at the provider as someone else of the domain.
    const elsewhere = `someone-${randomUUID().slice(0, 6)}@${domain}`;
    expect(await linkAs(victim.token, elsewhere)).to.deep.equal({ status: 403, error: 'link_mismatch' });
    // An account of the domain that is not in the team, at the provider as itself.
    const dora = `dora-${randomUUID().slice(0, 6)}@${domain}`;
    const signup = await postJson(`${accounts}/auth/signup`, { email: dora, password: `pw-${randomUUID()}`, name: 'Dora' });
    expect(signup.status).to.equal(201);
    expect(await linkAs(signup.body.token as string, dora)).to.deep.equal({ status: 403, error: 'link_not_member' });
    expect(await identitiesOf(victim.userId)).to.deep.equal([]);
    expect(await identitiesOf((signup.body.user as { id: string }).id)).to.deep.equal([]);
  });

  it('finds a team’s provider only by a proven domain of the address, never by its id, and answers alike with a team or without', async () => {
    const start = (query: Record<string, string>) =>
      fetch(`${accounts}/auth/sso/start?${new URLSearchParams({ ...query, binding: 'b'.repeat(43) })}`, { redirect: 'manual' });
    const where = (res: Response) => new URL(res.headers.get('location') ?? '');
    const names = (res: Response) => [...res.headers.keys()].filter((n) => n !== 'date').sort();
    const byId = await start({ subscriptionId: owner.subscriptionId });
    expect(byId.status).to.equal(303);
    expect(where(byId).origin).to.equal(consoleUrl);
    expect(where(byId).searchParams.get('error')).to.equal('bad_request');
    const withTeam = await start({ email: `someone@${domain}` });
    const without = await start({ email: `someone@nobody-${randomUUID().slice(0, 6)}.test` });
    expect([withTeam.status, without.status]).to.deep.equal([303, 303]);
    expect(names(withTeam)).to.deep.equal(names(without));
    expect(where(withTeam).origin).to.equal(provider.issuer);
    expect(where(without).searchParams.get('error')).to.equal('no_team');
    for (const res of [withTeam, without]) expect(res.headers.get('set-cookie')).to.match(/^svc_sso_flow=/);
    for (const res of [withTeam, without, byId]) expect(JSON.stringify([...res.headers])).not.to.include(owner.subscriptionId);
  });

  it('refuses a domain another team proved (409); of two teams naming one domain, the first to prove it gets it, and removal frees it; a code nobody issued (401)', async () => {
    const other = await teamOwner();
    const configure = (o: Owner, domains: string[]) =>
      call(
        'PUT',
        `${keys}/team/sso`,
        { authorization: `Bearer ${o.token}` },
        {
          subscriptionId: o.subscriptionId,
          issuer: provider.issuer,
          clientId: provider.clientId,
          clientSecret: provider.clientSecret,
          domains,
        },
      );
    const taken = await configure(other, [domain]);
    expect(taken.status, taken.text).to.equal(409);
    expect(taken.body.error).to.equal(`${domain} is already claimed for single sign-on by another team`);
    // Two owners naming one new domain: naming holds nothing, both are configured (pending). Both prove it at
    // the same moment: one gets it, the other 409; once the first removes its configuration, the domain is free.
    const third = await teamOwner();
    const beta = `beta-${randomUUID().slice(0, 6)}.test`;
    expect((await configure(other, [beta])).status).to.equal(200);
    expect((await configure(third, [beta])).status).to.equal(200);
    const tokenOf = async (o: Owner) => {
      const proof = { keysUrl: keys, mailpitUrl: stack.MAILPIT_URL, ownerToken: o.token, subscriptionId: o.subscriptionId, domain: beta };
      const asked = await requestDomainProof(proof);
      expect(asked.status, asked.text).to.equal(202);
      return domainProofTokenMailedTo(stack.MAILPIT_URL, asked.address);
    };
    const [otherToken, thirdToken] = [await tokenOf(other), await tokenOf(third)];
    const raced = await Promise.all([confirmDomainProof(keys, other.token, otherToken), confirmDomainProof(keys, third.token, thirdToken)]);
    expect(raced.map((r) => r.status).sort()).to.deep.equal([200, 409]);
    const [winner, loser] = raced[0]!.status === 200 ? [other, third] : [third, other];
    expect(
      (await call('DELETE', `${keys}/team/sso?subscriptionId=${winner.subscriptionId}`, { authorization: `Bearer ${winner.token}` }))
        .status,
    ).to.equal(200);
    await proveSsoDomain({
      keysUrl: keys,
      mailpitUrl: stack.MAILPIT_URL,
      ownerToken: loser.token,
      subscriptionId: loser.subscriptionId,
      domain: beta,
    });
    // A code nobody issued opens nothing either.
    const signedOn = await call('POST', `${accounts}/auth/sso/exchange`, {}, { code: 'not-a-code', binding: 'any' });
    expect(signedOn.status).to.equal(401);
  });

  it("shows the configuration and the sign-on's membership in the team's audit log; the log-in is the person's own", async () => {
    const made = await account(ana);
    const entries = await eventually('the audit entries', async () => {
      const res = await call('GET', `${keys}/audit`, { 'x-api-key': owner.apiKey });
      const list = (res.body.entries ?? []) as { action: string; userId: string | null; details: Record<string, unknown> }[];
      const configured = list.find((e) => e.action === 'team.sso-configured');
      const joined = list.find((e) => e.action === 'team.member-joined' && e.details.userId === made?.userId);
      return configured && joined ? { configured, joined, list, text: JSON.stringify(list) } : undefined;
    });
    expect(entries.configured.details).to.include({ issuer: provider.issuer });
    expect(entries.joined.details).to.include({ via: 'sso' });
    // Ana's log-in is filed under Ana (her own log), not under the team whose provider she came through.
    expect(entries.list.some((e) => e.action === 'account.logged-in' && e.userId === made?.userId)).to.equal(false);
    // Ana herself, a member, reads her sign-ons through this team's provider in its log.
    const hers = await call('GET', `${keys}/audit?subscriptionId=${owner.subscriptionId}&action=account.logged-in`, {
      authorization: `Bearer ${anaToken}`,
    });
    expect(hers.status, hers.text).to.equal(200);
    const signOns = hers.body.entries as { userId: string; details: Record<string, unknown> }[];
    expect(signOns.length).to.be.greaterThan(0);
    for (const e of signOns) expect(e).to.deep.include({ userId: made?.userId, details: { method: 'sso', team: owner.subscriptionId } });
    expect(entries.text).not.to.include(provider.clientSecret);
  });

  it('lets only the owner change SSO, and the owner and admins read it: a member is refused (403)', async () => {
    const asAna = { authorization: `Bearer ${anaToken}` };
    const read = await call('GET', `${keys}/team/sso?subscriptionId=${owner.subscriptionId}`, asAna);
    expect(read.status, read.text).to.equal(403);
    const change = await call('DELETE', `${keys}/team/sso?subscriptionId=${owner.subscriptionId}`, asAna);
    expect(change.status).to.equal(403);
    expect((await workspace())?.sso?.domains).to.deep.equal([domain]);
  });

  it('lets a removed member that sign-on made back in at the next sign-on, as a new membership (the provider decides)', async () => {
    const made = await account(ana);
    const before = ((await workspace())?.members ?? []) as { userId: string; membershipId: string }[];
    const first = before.find((m) => m.userId === made!.userId)!;
    const removed = await call('DELETE', `${keys}/team/members/${made!.userId}?subscriptionId=${owner.subscriptionId}`, asOwner());
    expect(removed.status, removed.text).to.equal(204);
    await context.clearCookies();
    await startAtConsole(ana);
    await signInAtProvider(ana);
    await page.waitForURL(`${consoleUrl}/account`);
    const after = ((await workspace())?.members ?? []) as { userId: string; membershipId: string; via: string }[];
    const again = after.find((m) => m.userId === made!.userId);
    expect(again?.via).to.equal('sso');
    expect(again?.membershipId).not.to.equal(first.membershipId);
  });

  it('removes SSO: recorded in the audit log, and the domain no longer signs on', async () => {
    const removed = await call('DELETE', `${keys}/team/sso?subscriptionId=${owner.subscriptionId}`, asOwner());
    expect(removed.status, removed.text).to.equal(200);
    expect(removed.body.sso).to.equal(null);
    await eventually('team.sso-removed in the audit log', async () => {
      const res = await call('GET', `${keys}/audit`, { 'x-api-key': owner.apiKey });
      return ((res.body.entries ?? []) as { action: string }[]).find((e) => e.action === 'team.sso-removed');
    });
    await context.clearCookies();
    await page.goto(`${consoleUrl}/login`);
    await page.getByLabel('Work address').fill(ana);
    await refusedWith(
      () => page.getByRole('button', { name: 'Continue with SSO' }).click(),
      404,
      /Single sign-on is not available for that address/,
    );
  });

  it('keeps the log-in page and the refusal page accessible (axe: nothing above minor), the SSO form reachable by keyboard', async () => {
    await context.clearCookies();
    for (const path of ['/login', '/sso/complete?error=wrong_domain']) {
      await page.goto(`${consoleUrl}${path}`);
      const above = (await axeScan(page)).filter((v) => v.impact !== 'minor');
      expect(above, `${path}: ${JSON.stringify(above)}`).to.deep.equal([]);
    }
    await page.goto(`${consoleUrl}/login`);
    let reached = false;
    for (let i = 0; i < 20 && !reached; i += 1) {
      await page.keyboard.press('Tab');
      reached = (await page.evaluate('document.activeElement && document.activeElement.getAttribute("name")')) === 'ssoEmail';
    }
    expect(reached).to.equal(true);
  });
  // Last: it spends this address's sign-on starts for the minute.
  it('limits sign-on starts per address (each asks the team’s provider): past the budget, the console says so (429)', async () => {
    const start = () =>
      fetch(`${accounts}/auth/sso/start?email=${encodeURIComponent(ana)}&binding=${'b'.repeat(43)}`, { redirect: 'manual' });
    const seen: string[] = [];
    for (let i = 0; i < 40 && !seen.includes('rate_limited'); i += 1) {
      const res = await start();
      expect(res.status).to.equal(303);
      seen.push(new URL(res.headers.get('location')!).searchParams.get('error') ?? 'none');
    }
    expect(seen[0]).to.equal('no_team');
    expect(seen.at(-1)).to.equal('rate_limited');
    const res = await page.goto(`${consoleUrl}/sso/complete?error=rate_limited`);
    expect(res?.status()).to.equal(429);
  });
});
