import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { freePort } from '../../deploy/local/processes.ts';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { newEvent } from '../../events/envelope.ts';
import { accountsService } from '../../services/accounts/accounts.service.ts';
import type { SubscriptionCreated } from '../../services/billing/events.ts';
import { consoleService } from '../../services/console/console.service.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { mailerService } from '../../services/mailer/mailer.service.ts';
import type { TeamSsoDomainProofRequested } from '../../services/teams/events.ts';
import { DOMAIN_PROOFS_PER_HOUR } from '../../services/teams/sso-domain-proof.routes.ts';
import { domainProofTokenHash, newDomainProofToken, sealDomainProofToken } from '../../services/teams/sso-domain-proof-token.ts';
import { findTeam, teamByDomain } from '../../services/teams/workspaces.projection.ts';
import { useContractCheck } from '../support/contract-check.ts';
import { eventually, testEnv, testLogger } from '../support/env.ts';
import { postJson } from '../support/http.ts';
import { keysMailedTo, mailTo } from '../support/mailpit.ts';
import { type LocalOidcProvider, startOidcProvider } from '../support/oidc-provider.ts';
import { confirmDomainProof, domainProofTokenMailedTo, proveSsoDomain, requestDomainProof } from '../support/sso-domain-proof.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';
import { subscriptionCreated } from '../support/subscriptions.ts';
import { launchChromiumForTests } from '../integration/vision/chromium-under-test.ts';
import { WIDTHS, axeScan } from './console-pages.ts';

const KEY_ENCRYPTION_KEY = 'cd'.repeat(32);

interface Person {
  email: string;
  password: string;
  userId: string;
  token: string;
}
type Owner = Person & { subscriptionId: string };

/**
 * Proving a single sign-on domain by an e-mail round trip, end to end on the real Kafka, FerretDB and
 * Mailpit with a real OpenID Connect provider: a configured domain signs on only once the owner
 * confirmed the link mailed to an address at it; public mail domains are refused; the link works once,
 * until it expires, for its own team's owner only; naming a domain holds nothing, proving it claims it.
 */
describe('team SSO domain proof by e-mail round trip (e2e)', function () {
  this.timeout(120_000);
  let stack: StackEnv;
  let platform: RunningPlatform;
  let provider: LocalOidcProvider;
  let accounts: string;
  let keys: string;
  let CONSOLE: string;
  let browser: Browser | undefined;
  let owner: Owner;
  const run = randomUUID().slice(0, 8);
  const domain = `example-corp-${run}.test`;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    stack = await useStack();
    if (!stack.MAILPIT_URL) this.skip();
    const ports = { accounts: await freePort(), keys: await freePort(), console: await freePort() };
    accounts = `http://127.0.0.1:${ports.accounts}`;
    keys = `http://127.0.0.1:${ports.keys}`;
    CONSOLE = `http://127.0.0.1:${ports.console}`;
    provider = await startOidcProvider({ redirectUri: `${accounts}/auth/sso/callback` });
    platform = await startServices(
      [accountsService, keysService, mailerService, consoleService],
      testEnv(stack, {
        ACCOUNTS_PORT: String(ports.accounts),
        KEYS_PORT: String(ports.keys),
        CONSOLE_PORT: String(ports.console),
        CONSOLE_SECRET: 'ef'.repeat(32),
        AUTH_URL: keys,
        ACCOUNTS_PUBLIC_URL: accounts,
        CONSOLE_PUBLIC_URL: CONSOLE,
        SSO_ALLOW_HTTP_ISSUERS: 'true',
        WEBHOOK_SECRET: 'ab'.repeat(32),
        KEY_ENCRYPTION_KEY,
      }),
      testLogger(),
    );
    owner = await teamOwner('owner');
  });

  after(async () => {
    await browser?.close();
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
    await provider?.stop();
  });

  useContractCheck();

  const bearer = (p: Person) => ({ authorization: `Bearer ${p.token}` });
  const call = async (method: string, url: string, headers: Record<string, string>, body?: unknown) => {
    const res = await fetch(url, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, text, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };
  const db = () => platform.runtime.mongo.db;

  async function person(prefix: string, at = 'example.test'): Promise<Person> {
    const email = `${prefix}-${randomUUID().slice(0, 8)}@${at}`;
    const password = `pw-${randomUUID()}`;
    const signup = await postJson(`${accounts}/auth/signup`, { email, password, name: prefix });
    expect(signup.status, signup.text).to.equal(201);
    return { email, password, userId: (signup.body.user as { id: string }).id, token: signup.body.token as string };
  }

  async function teamOwner(prefix: string, at?: string): Promise<Owner> {
    const p = await person(prefix, at);
    const subscriptionId = `sub-${randomUUID()}`;
    const created: SubscriptionCreated = subscriptionCreated({ subscriptionId, userId: p.userId, email: p.email, tier: 'team' });
    await platform.runtime.publisher.publishOrdered([created]);
    await eventually(`the team key mailed to ${p.email}`, async () => (await keysMailedTo(stack.MAILPIT_URL, p.email))[0]);
    return { ...p, subscriptionId };
  }

  const configure = (o: Owner, domains: string[], by: Person = o) =>
    call('PUT', `${keys}/team/sso`, bearer(by), {
      subscriptionId: o.subscriptionId,
      issuer: provider.issuer,
      clientId: provider.clientId,
      clientSecret: provider.clientSecret,
      domains,
    });
  const ask = (o: Owner, d: string, address?: string, by: Person = o) =>
    requestDomainProof({
      keysUrl: keys,
      mailpitUrl: stack.MAILPIT_URL,
      ownerToken: by.token,
      subscriptionId: o.subscriptionId,
      domain: d,
      ...(address ? { address } : {}),
    });

  /** Joins p to the owner's workspace by the real invitation flow (the link read from Mailpit). */
  async function join(o: Owner, p: Person, role: 'admin' | 'member'): Promise<void> {
    const invited = await postJson(`${keys}/team/invitations`, { subscriptionId: o.subscriptionId, email: p.email, role }, bearer(o));
    expect(invited.status, invited.text).to.equal(201);
    const mail = await eventually(`the invitation to ${p.email}`, async () =>
      (await mailTo(stack.MAILPIT_URL, p.email)).find((m) => m.MessageID.includes(invited.body.invitationId as string)),
    );
    const token = /\/team\/join\?token=([A-Za-z0-9_-]{43})/.exec(mail.Text)![1]!;
    const accepted = await postJson(`${keys}/team/invitations/accept`, { token }, bearer(p));
    expect(accepted.status, accepted.text).to.equal(200);
  }

  it('proves example-corp by the link mailed to an address there: the domain signs on only afterwards, and the link works once', async () => {
    const put = await configure(owner, [domain]);
    expect(put.status, put.text).to.equal(200);
    expect(put.body.sso).to.deep.include({ domains: [domain], provenDomains: [] });
    expect((put.body.sso as { domainStatus: unknown[] }).domainStatus).to.deep.equal([
      { domain, status: 'pending', proofSentTo: null, proofExpiresAt: null },
    ]);
    // Configured is not claimed: no sign-on finds the team by the domain yet.
    expect(await teamByDomain(db(), domain)).to.equal(null);

    const address = `it-admin@${domain}`;
    const asked = await ask(owner, domain, address);
    expect(asked.status, asked.text).to.equal(202);
    const token = await domainProofTokenMailedTo(stack.MAILPIT_URL, address);
    const [mail] = await mailTo(stack.MAILPIT_URL, address);
    expect(mail!.Subject).to.equal(`Prove ${domain} for single sign-on on svc`);
    expect(mail!.Text).to.include(owner.email).and.to.include(`${CONSOLE}/team/sso/verify?token=${token}`);
    // Pending, with where the link went and until when; never the token nor its hash.
    const pending = await call('GET', `${keys}/team/sso?subscriptionId=${owner.subscriptionId}`, bearer(owner));
    const [status] = (pending.body.sso as { domainStatus: { status: string; proofSentTo: string }[] }).domainStatus;
    expect(status).to.include({ status: 'pending', proofSentTo: address });
    const teamView = await call('GET', `${keys}/team?subscriptionId=${owner.subscriptionId}`, bearer(owner));
    expect(teamView.body.ssoDomains).to.deep.equal((pending.body.sso as { domainStatus: unknown }).domainStatus);
    for (const text of [pending.text, teamView.text]) {
      expect(text).not.to.include(token);
      expect(text).not.to.include(domainProofTokenHash(token));
    }
    expect(await teamByDomain(db(), domain)).to.equal(null);

    const confirmed = await confirmDomainProof(keys, owner.token, token);
    expect(confirmed.status, confirmed.text).to.equal(200);
    expect(confirmed.body).to.deep.equal({ subscriptionId: owner.subscriptionId, domain, status: 'proven' });
    expect((await teamByDomain(db(), domain))?.subscriptionId).to.equal(owner.subscriptionId);
    const after = await call('GET', `${keys}/team?subscriptionId=${owner.subscriptionId}`, bearer(owner));
    expect(after.body.ssoDomains).to.deep.equal([{ domain, status: 'proven', proofSentTo: null, proofExpiresAt: null }]);

    // Used once: the same link again is refused, and asking again for a proven domain is pointless.
    const reused = await confirmDomainProof(keys, owner.token, token);
    expect(reused.status, reused.text).to.equal(410);
    expect(reused.body.code).to.equal('USED');
    expect((await ask(owner, domain, address)).status).to.equal(409);

    // Both events are in the team's audit log, without the token.
    await eventually('the proof in the audit log', async () => {
      const res = await call('GET', `${keys}/audit?subscriptionId=${owner.subscriptionId}`, bearer(owner));
      const actions = ((res.body.entries ?? []) as { action: string }[]).map((e) => e.action);
      if (!actions.includes('team.sso-domain-verified') || !actions.includes('team.sso-domain-proof-requested')) return undefined;
      expect(res.text).not.to.include(token);
      return true;
    });
  });

  it('keeps the proof while a new configuration still names the domain, drops it with the domain: naming it again needs a new proof', async () => {
    const o = await teamOwner('keeper');
    const d = `keep-${run}.test`;
    expect((await configure(o, [d])).status).to.equal(200);
    await proveSsoDomain({
      keysUrl: keys,
      mailpitUrl: stack.MAILPIT_URL,
      ownerToken: o.token,
      subscriptionId: o.subscriptionId,
      domain: d,
    });
    // Same domains (a new client id stands for a new provider setting): still proven.
    expect((await configure(o, [d, `other-${run}.test`])).body.sso).to.deep.include({ provenDomains: [d] });
    expect((await configure(o, [`other-${run}.test`])).body.sso).to.deep.include({ provenDomains: [] });
    expect(await teamByDomain(db(), d)).to.equal(null);
    expect((await configure(o, [d])).body.sso).to.deep.include({ provenDomains: [] });
    expect(await teamByDomain(db(), d)).to.equal(null);
  });

  it('refuses a public mail domain or a public suffix in the configuration (400, naming the domain), and records nothing', async () => {
    const o = await teamOwner('public');
    for (const d of ['gmail.com', 'hotmail.co.uk', 'proton.me', 'co.uk']) {
      const res = await configure(o, [`fine-${run}.test`, d]);
      expect(res.status, d).to.equal(400);
      expect(res.body.error).to.include(d).and.to.include('cannot be claimed for single sign-on');
    }
    expect((await findTeam(db(), o.subscriptionId))?.sso ?? null).to.equal(null);
  });

  it('mails only an address at the domain: another domain, no address (the owner elsewhere), an unconfigured domain are refused', async () => {
    const d = `addr-${run}.test`;
    const o = await teamOwner('addr');
    expect((await configure(o, [d])).status).to.equal(200);
    expect((await ask(o, d, `it@evil-${run}.test`)).status).to.equal(400);
    expect((await ask(o, d, `it@sub.${d}`)).status).to.equal(400);
    const none = await postJson(`${keys}/team/sso/domain-proofs`, { subscriptionId: o.subscriptionId, domain: d }, bearer(o));
    expect(none.status, none.text).to.equal(400);
    expect(none.body.error).to.include(`name an address at ${d}`);
    expect((await ask(o, `elsewhere-${run}.test`)).status).to.equal(422);
    // An owner whose own address is at the domain may leave the address out: the link goes to them.
    const own = `own-${run}.test`;
    const local = await teamOwner('local', own);
    expect((await configure(local, [own])).status).to.equal(200);
    const mine = await postJson(`${keys}/team/sso/domain-proofs`, { subscriptionId: local.subscriptionId, domain: own }, bearer(local));
    expect(mine.status, mine.text).to.equal(202);
    expect(mine.body.address).to.equal(local.email);
    await domainProofTokenMailedTo(stack.MAILPIT_URL, local.email);
  });

  it('lets only the owner ask for and confirm a proof: an admin, a member and another account are refused, and nothing is proven', async () => {
    const o = await teamOwner('roles');
    const d = `roles-${run}.test`;
    expect((await configure(o, [d])).status).to.equal(200);
    const admin = await person('admin');
    const member = await person('member');
    const stranger = await person('stranger');
    await join(o, admin, 'admin');
    await join(o, member, 'member');
    // Configuring: admin and member 403, a stranger is told there is no such workspace.
    expect((await configure(o, [d], admin)).status).to.equal(403);
    expect((await configure(o, [d], member)).status).to.equal(403);
    expect((await configure(o, [d], stranger)).status).to.equal(404);
    // Asking for the e-mail: likewise.
    expect((await ask(o, d, `it@${d}`, admin)).status).to.equal(403);
    expect((await ask(o, d, `it@${d}`, member)).status).to.equal(403);
    expect((await ask(o, d, `it@${d}`, stranger)).status).to.equal(404);
    // Confirming the owner's real link: only the owner.
    const asked = await ask(o, d, `it@${d}`);
    expect(asked.status).to.equal(202);
    const token = await domainProofTokenMailedTo(stack.MAILPIT_URL, `it@${d}`);
    expect((await confirmDomainProof(keys, admin.token, token)).status).to.equal(403);
    expect((await confirmDomainProof(keys, member.token, token)).status).to.equal(403);
    const strangers = await confirmDomainProof(keys, stranger.token, token);
    expect(strangers.status).to.equal(404);
    // What a stranger hears for a real token is what anyone hears for a made-up one.
    const madeUp = await confirmDomainProof(keys, stranger.token, newDomainProofToken());
    expect(madeUp.status).to.equal(404);
    expect(madeUp.body).to.deep.equal(strangers.body);
    expect((await postJson(`${keys}/team/sso/domain-proofs/confirm`, { token })).status).to.equal(401);
    expect(await teamByDomain(db(), d)).to.equal(null);
    // The refusals spent nothing: the owner still confirms it.
    expect((await confirmDomainProof(keys, o.token, token)).status).to.equal(200);
  });

  it("refuses team A's link to team B's owner; naming a domain holds nothing, the first to prove it claims it", async () => {
    const a = await teamOwner('team-a');
    const b = await teamOwner('team-b');
    const d = `contested-${run}.test`;
    // B names the domain first (a squatter): that does not stop A from naming it.
    expect((await configure(b, [d])).status).to.equal(200);
    expect((await configure(a, [d])).status).to.equal(200);
    const askedA = await ask(a, d, `it@${d}`);
    expect(askedA.status).to.equal(202);
    const tokenA = await domainProofTokenMailedTo(stack.MAILPIT_URL, `it@${d}`);
    // B's owner holding A's link: refused as if it did not exist; B gains nothing.
    expect((await confirmDomainProof(keys, b.token, tokenA)).status).to.equal(404);
    expect((await findTeam(db(), b.subscriptionId))?.sso?.provenDomains).to.deep.equal([]);
    // B asks for its own link too; A proves first, so B's link then claims nothing.
    const askedB = await ask(b, d, `postmaster@${d}`);
    expect(askedB.status).to.equal(202);
    const tokenB = await domainProofTokenMailedTo(stack.MAILPIT_URL, `postmaster@${d}`);
    expect((await confirmDomainProof(keys, a.token, tokenA)).status).to.equal(200);
    const late = await confirmDomainProof(keys, b.token, tokenB);
    expect(late.status, late.text).to.equal(409);
    expect(late.body.error).to.equal(`${d} is already claimed for single sign-on by another team`);
    expect((await teamByDomain(db(), d))?.subscriptionId).to.equal(a.subscriptionId);
    // Now proven by A, a new configuration naming it elsewhere is refused at once, and so is a new proof.
    const c = await teamOwner('team-c');
    expect((await configure(c, [d])).status).to.equal(409);
    expect((await ask(b, d, `it@${d}`)).status).to.equal(409);
    // Once A removes its configuration, the domain is free to be proven by another team.
    expect((await call('DELETE', `${keys}/team/sso?subscriptionId=${a.subscriptionId}`, bearer(a))).status).to.equal(200);
    expect(await teamByDomain(db(), d)).to.equal(null);
    await proveSsoDomain({
      keysUrl: keys,
      mailpitUrl: stack.MAILPIT_URL,
      ownerToken: b.token,
      subscriptionId: b.subscriptionId,
      domain: d,
    });
    expect((await teamByDomain(db(), d))?.subscriptionId).to.equal(b.subscriptionId);
  });

  it('refuses an expired link (410), one a resend replaced, and a second confirm at the same moment; limits the e-mails per hour (429)', async () => {
    const o = await teamOwner('expiry');
    const d = `expiry-${run}.test`;
    expect((await configure(o, [d])).status).to.equal(200);
    // A proof that expired a minute ago, written as the route would have written it then: no waiting.
    const token = newDomainProofToken();
    const expired: TeamSsoDomainProofRequested = newEvent('team.sso-domain-proof-requested', {
      subscriptionId: o.subscriptionId,
      proofId: randomUUID(),
      domain: d,
      address: `it@${d}`,
      tokenHash: domainProofTokenHash(token),
      encryptedToken: sealDomainProofToken(token, Buffer.from(KEY_ENCRYPTION_KEY, 'hex'), { subscriptionId: o.subscriptionId, domain: d }),
      expiresAt: new Date(Date.now() - 60_000),
      requestedBy: o.userId,
      requestedByEmail: o.email,
    });
    await platform.runtime.publisher.publishOrdered([expired]);
    const refused = await eventually('the expired proof in the workspace', async () => {
      const answer = await confirmDomainProof(keys, o.token, token);
      return answer.status === 404 ? undefined : answer;
    });
    expect(refused.status, refused.text).to.equal(410);
    expect(refused.body.code).to.equal('EXPIRED');
    expect(await teamByDomain(db(), d)).to.equal(null);

    // A resend replaces the link before it: the first is refused, the second proves.
    const address = `resend@${d}`;
    expect((await ask(o, d, address)).status).to.equal(202);
    const first = await domainProofTokenMailedTo(stack.MAILPIT_URL, address);
    expect((await ask(o, d, address)).status).to.equal(202);
    const second = await domainProofTokenMailedTo(stack.MAILPIT_URL, address, [first]);
    const replaced = await confirmDomainProof(keys, o.token, first);
    expect(replaced.status).to.equal(410);
    expect(replaced.body.code).to.equal('USED');
    // The live link confirmed twice at the same moment: once.
    const both = await Promise.all([confirmDomainProof(keys, o.token, second), confirmDomainProof(keys, o.token, second)]);
    expect(both.map((r) => r.status).sort()).to.deep.equal([200, 410]);

    // At most DOMAIN_PROOFS_PER_HOUR e-mails per workspace and hour (two were sent above).
    const other = `limit-${run}.test`;
    expect((await configure(o, [d, other])).status).to.equal(200);
    const statuses: number[] = [];
    for (let i = 0; i < DOMAIN_PROOFS_PER_HOUR - 1; i++) statuses.push((await ask(o, other, `it@${other}`)).status);
    expect(statuses.filter((s) => s === 202).length).to.equal(DOMAIN_PROOFS_PER_HOUR - 2);
    expect(statuses.at(-1)).to.equal(429);
  });

  it('proves a domain from the e-mail link in a browser: opening it confirms nothing, the owner logs in, sends it again from the team page (the first link replaced) and confirms; the team page says proven', async () => {
    const o = await teamOwner('browser');
    const d = `browser-${run}.test`;
    expect((await configure(o, [d])).status).to.equal(200);
    const address = `it@${d}`;
    expect((await ask(o, d, address)).status).to.equal(202);
    const token = await domainProofTokenMailedTo(stack.MAILPIT_URL, address);
    const [mail] = await mailTo(stack.MAILPIT_URL, address);
    const link = /(http:\/\/127\.0\.0\.1:\d+\/team\/sso\/verify\?token=[A-Za-z0-9_-]{43})/.exec(mail!.Text)![1]!;
    expect(link).to.equal(`${CONSOLE}/team/sso/verify?token=${token}`);
    browser = await launchChromiumForTests();
    const context = await browser.newContext({ viewport: WIDTHS.desktop });
    const page = await context.newPage();
    try {
      // Signed out: a log-in form that comes back here; nothing is confirmed by opening the link.
      await page.goto(link);
      expect(await page.locator('main').textContent()).to.include("Log in as the team's owner");
      expect(await teamByDomain(db(), d)).to.equal(null);
      await page.getByLabel('E-mail').fill(o.email);
      await page.getByLabel('Password').fill(o.password);
      await page.getByRole('button', { name: 'Log in', exact: true }).click();
      await page.waitForURL((url) => url.pathname === '/team/sso/verify');
      expect(await page.locator('main').textContent()).to.include(o.email);
      expect(await teamByDomain(db(), d)).to.equal(null);
      const above = (await axeScan(page)).filter((v) => v.impact !== 'minor');
      expect(above, JSON.stringify(above)).to.deep.equal([]);
      // The team page meanwhile: the domain pending, where its link went, a form to send another (axe too).
      await page.goto(`${CONSOLE}/team?subscriptionId=${o.subscriptionId}`);
      const row = page.locator(`[data-sso-domain="${d}"]`);
      expect(await row.getAttribute('data-status')).to.equal('pending');
      expect(await row.textContent()).to.include(`link sent to ${address}`);
      const onTeam = (await axeScan(page)).filter((v) => v.impact !== 'minor');
      expect(onTeam, JSON.stringify(onTeam)).to.deep.equal([]);
      // Sent again from the team page, to another address there: the first link is replaced.
      const postmaster = `postmaster@${d}`;
      await row.getByLabel(`Address at ${d}`).fill(postmaster);
      await row.getByRole('button', { name: `Send proof e-mail ${d}` }).click();
      await page.waitForURL((url) => url.pathname === '/team' && url.searchParams.get('done') === 'proof-sent');
      expect(await page.locator(`[data-sso-domain="${d}"]`).textContent()).to.include(`link sent to ${postmaster}`);
      const resent = await domainProofTokenMailedTo(stack.MAILPIT_URL, postmaster);
      const newLink = `${CONSOLE}/team/sso/verify?token=${resent}`;
      await page.goto(link);
      await page.getByRole('button', { name: 'Confirm the domain' }).click();
      await page.waitForURL((url) => url.pathname === '/team/sso/verify');
      expect(await page.locator('[data-refusal]').textContent()).to.include('replaced by a newer one');
      expect(await teamByDomain(db(), d)).to.equal(null);
      await page.goto(newLink);
      await page.getByRole('button', { name: 'Confirm the domain' }).click();
      await page.waitForURL((url) => url.pathname === '/team' && url.searchParams.get('done') === 'domain-proven');
      expect(await page.locator(`[data-sso-domain="${d}"]`).getAttribute('data-status')).to.equal('proven');
      expect(await page.content()).not.to.include(resent);
      expect((await teamByDomain(db(), d))?.subscriptionId).to.equal(o.subscriptionId);
      // The same link again: refused in the console's words, with its status.
      const again = await page.goto(newLink);
      expect(again?.status()).to.equal(200);
      await page.getByRole('button', { name: 'Confirm the domain' }).click();
      await page.waitForURL((url) => url.pathname === '/team/sso/verify');
      expect(await page.locator('[data-refusal]').textContent()).to.include('already used');
    } finally {
      await context.close();
    }
  });
});
