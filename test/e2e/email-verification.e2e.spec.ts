import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { pino } from 'pino';
import { freePort } from '../../deploy/local/processes.ts';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { accountsService } from '../../services/accounts/accounts.service.ts';
import { getUser } from '../../services/accounts/users.projection.ts';
import { billingService } from '../../services/billing/billing.service.ts';
import { getSubscription } from '../../services/billing/subscriptions.projection.ts';
import { webhookIngressService } from '../../services/billing/webhook-ingress.service.ts';
import { getKeyBySubscription } from '../../services/keys/keys.projection.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { mailerService } from '../../services/mailer/mailer.service.ts';
import { useContractCheck } from '../support/contract-check.ts';
import { verificationLinksTo, verificationToken } from '../support/email-verification.ts';
import { eventually, testEnv } from '../support/env.ts';
import { postJson } from '../support/http.ts';
import { deliver, providerTime, subscriptionPayload } from '../support/lemonsqueezy.ts';
import { keysMailedTo } from '../support/mailpit.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';

const SIGNING_SECRET = 'e2e-signing-secret-0123456789';
const TEAM_VARIANT = 301790;

interface Person {
  email: string;
  password: string;
  userId: string;
  token: string;
}

/**
 * Ownership by e-mail needs a verified address, on real Kafka, FerretDB and Mailpit: whoever signs
 * up first with someone's address owns nothing that address buys from the store page (a webhook
 * without custom_data.user_id); the address's owner, once signed in and holding the mailed link,
 * verifies it and the subscription is theirs at once. Links are single use, replaced by a resend,
 * expire, and their secret is in no event and no log line.
 */
describe('address verification before ownership by e-mail (e2e)', function () {
  this.timeout(120_000);
  let stack: StackEnv;
  let platform: RunningPlatform;
  let accounts: string;
  let keys: string;
  let webhooks: string;
  // Every log line of every service, at debug: the links' secrets must be in none.
  const logLines: string[] = [];

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    stack = await useStack();
    if (!stack.MAILPIT_URL) this.skip();
    const ports = { accounts: await freePort(), keys: await freePort(), webhooks: await freePort() };
    platform = await startServices(
      [accountsService, keysService, webhookIngressService, billingService, mailerService],
      testEnv(stack, {
        ACCOUNTS_PORT: String(ports.accounts),
        KEYS_PORT: String(ports.keys),
        WEBHOOKS_PORT: String(ports.webhooks),
        PAYMENT_WEBHOOK_SECRET: SIGNING_SECRET,
        WEBHOOK_SECRET: 'ab'.repeat(32),
        KEY_ENCRYPTION_KEY: 'cd'.repeat(32),
        PAYMENT_VARIANT_TIERS: `${TEAM_VARIANT}:team`,
        CONSOLE_PUBLIC_URL: 'https://console.svc.test',
      }),
      pino({ level: 'debug' }, { write: (line: string) => void logLines.push(line) }),
    );
    accounts = `http://127.0.0.1:${ports.accounts}`;
    keys = `http://127.0.0.1:${ports.keys}`;
    webhooks = `http://127.0.0.1:${ports.webhooks}`;
  });

  after(async () => {
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
  });

  useContractCheck();

  const db = () => platform.runtime.mongo.db;
  const bearer = (p: Pick<Person, 'token'>) => ({ authorization: `Bearer ${p.token}` });
  const call = async (method: string, url: string, headers: Record<string, string> = {}, body?: unknown) => {
    const res = await fetch(url, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, text, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };
  const verify = (p: Pick<Person, 'token'>, token: string) => call('POST', `${accounts}/auth/verify`, bearer(p), { token });
  const resend = (p: Pick<Person, 'token'>) => call('POST', `${accounts}/auth/verify/resend`, bearer(p));
  const me = async (p: Person) => (await call('GET', `${accounts}/auth/me`, bearer(p))).body;

  async function signUp(email: string, name: string): Promise<Person> {
    const password = `pw-${randomUUID()}`;
    const signup = await postJson(`${accounts}/auth/signup`, { email, password, name });
    expect(signup.status, signup.text).to.equal(201);
    return { email, password, userId: (signup.body.user as { id: string }).id, token: signup.body.token as string };
  }
  const address = (who: string) => `${who}-${randomUUID().slice(0, 8)}@victim.example`;

  /** The store page's purchase: a team subscription whose webhook names an address and no account. */
  async function boughtFromStorePage(email: string): Promise<string> {
    const subscriptionId = String(randomInt(10_000_000, 99_999_999));
    const payload = subscriptionPayload('subscription_created', {
      subscriptionId,
      userId: null,
      attributes: { user_email: email, variant_id: TEAM_VARIANT },
    });
    expect((await deliver(webhooks, SIGNING_SECRET, payload)).status).to.equal(200);
    // The key is mailed to the address once the subscription and its key are projected.
    await eventually(`the key e-mail of ${subscriptionId}`, async () =>
      (await keysMailedTo(stack.MAILPIT_URL, email)).length > 0 ? true : undefined,
    );
    await eventually(`the key of ${subscriptionId}`, async () =>
      (await getKeyBySubscription(db(), subscriptionId))?.tier === 'team' ? true : undefined,
    );
    return subscriptionId;
  }

  /** Every way an account reaches a subscription with its session: none answers for a subscription it does not own. */
  async function reach(p: Person, subscriptionId: string) {
    const [teams, team, rotate, audit] = await Promise.all([
      call('GET', `${keys}/teams`, bearer(p)),
      call('GET', `${keys}/team?subscriptionId=${subscriptionId}`, bearer(p)),
      call('POST', `${keys}/keys/rotate`, bearer(p), { subscriptionId, graceSeconds: 0 }),
      call('GET', `${keys}/audit?subscriptionId=${subscriptionId}`, bearer(p)),
    ]);
    const listed = (teams.body.workspaces as { subscriptionId: string }[] | undefined)?.some((w) => w.subscriptionId === subscriptionId);
    return { listed, team: team.status, rotate: rotate.status, audit: audit.status };
  }

  it("whoever signs up first with someone's address owns nothing it buys; the link needs the account's session as well as the mailbox", async () => {
    const victimAddress = address('ceo');
    // B signs up first with the CEO's address, and cannot read the CEO's mail.
    const squatter = await signUp(victimAddress, 'Not The CEO');
    expect((await me(squatter)).emailVerified).to.equal(false);
    // The real CEO buys the team tier from the store page, without an account of theirs.
    const subscriptionId = await boughtFromStorePage(victimAddress);

    expect(await reach(squatter, subscriptionId)).to.deep.equal({ listed: false, team: 404, rotate: 404, audit: 404 });
    // Billing did not link it to the unverified account either: not by id, not by tier.
    expect((await getSubscription(db(), subscriptionId))?.userId ?? null).to.equal(null);
    expect((await getUser(db(), squatter.userId))?.tier).to.equal('free');

    // B guesses: forged and malformed links verify nothing, with one answer that says nothing.
    const forged = await verify(squatter, randomBytes(32).toString('base64url'));
    expect(forged.status).to.equal(400);
    expect(forged.body.code).to.equal('INVALID_LINK');
    expect((await verify(squatter, 'x')).status).to.equal(400);

    // The mailbox's owner holds B's link (it went to their address), but not B's session: nothing.
    const link = await verificationToken(stack.MAILPIT_URL, victimAddress);
    expect((await call('POST', `${accounts}/auth/verify`, {}, { token: link })).status).to.equal(401);
    const someoneElse = await signUp(address('other'), 'Other');
    const withAnotherSession = await verify(someoneElse, link);
    expect(withAnotherSession.status).to.equal(400);
    expect(withAnotherSession.body).to.deep.equal(forged.body);
    expect((await me(someoneElse)).emailVerified).to.equal(false);
    expect((await me(squatter)).emailVerified).to.equal(false);
    expect(await reach(squatter, subscriptionId)).to.deep.equal({ listed: false, team: 404, rotate: 404, audit: 404 });
  });

  it("the address's owner who signed up, once verified, owns what it bought before: at once, and its tier from the next change", async () => {
    const ownerAddress = address('owner');
    const owner = await signUp(ownerAddress, 'Owner');
    const subscriptionId = await boughtFromStorePage(ownerAddress);
    // Bought before the address is verified: the link waits.
    expect(await reach(owner, subscriptionId)).to.deep.equal({ listed: false, team: 404, rotate: 404, audit: 404 });

    const token = await verificationToken(stack.MAILPIT_URL, ownerAddress);
    const verified = await verify(owner, token);
    expect(verified.status, verified.text).to.equal(200);
    expect(verified.body).to.deep.equal({ emailVerified: true, email: ownerAddress });
    expect((await me(owner)).emailVerified).to.equal(true);

    const after = await reach(owner, subscriptionId);
    expect(after.listed).to.equal(true);
    expect(after.team).to.equal(200);
    expect(after.audit).to.equal(200);
    expect(after.rotate).to.equal(200);

    // Used once: the same link again, as a replayed click, is refused.
    const again = await verify(owner, token);
    expect(again.status).to.equal(400);
    expect(again.body.code).to.equal('INVALID_LINK');

    // The subscription's next change (a new renewal date) names the verified account, and its tier follows.
    const updated = subscriptionPayload('subscription_updated', {
      subscriptionId,
      userId: null,
      attributes: { user_email: ownerAddress, variant_id: TEAM_VARIANT, renews_at: providerTime(new Date(Date.now() + 40 * 86_400_000)) },
    });
    expect((await deliver(webhooks, SIGNING_SECRET, updated)).status).to.equal(200);
    await eventually('the account at team', async () => ((await getUser(db(), owner.userId))?.tier === 'team' ? true : undefined));
  });

  it('a resend replaces the link and is limited per account; an expired link is refused; a verified account is told so', async () => {
    const person = await signUp(address('resend'), 'Resender');
    const welcome = await verificationToken(stack.MAILPIT_URL, person.email);
    const first = await resend(person);
    expect(first.status, first.text).to.equal(202);
    expect(first.body.emailVerified).to.equal(false);
    const newer = await verificationToken(stack.MAILPIT_URL, person.email, 2);
    expect(newer).not.to.equal(welcome);
    // The welcome's link was replaced.
    expect((await verify(person, welcome)).body.code).to.equal('INVALID_LINK');

    // Expired: the account's current link, written as a resend would have 48 hours ago.
    await db()
      .collection('accounts')
      .updateOne({ _id: person.email as never }, { $set: { 'verification.expiresAt': new Date(Date.now() - 1000) } });
    const expired = await verify(person, newer);
    expect(expired.status).to.equal(410);
    expect(expired.body.code).to.equal('EXPIRED');
    expect((await me(person)).emailVerified).to.equal(false);

    // Three resends an hour per account: the fourth is refused with Retry-After, and no e-mail leaves.
    expect((await resend(person)).status).to.equal(202);
    expect((await resend(person)).status).to.equal(202);
    const limited = await resend(person);
    expect(limited.status).to.equal(429);
    expect(Number(limited.headers.get('retry-after'))).to.be.greaterThan(0);
    await eventually('the three resends mailed', async () =>
      (await verificationLinksTo(stack.MAILPIT_URL, person.email)).length >= 4 ? true : undefined,
    );
    const links = await verificationLinksTo(stack.MAILPIT_URL, person.email);
    expect(links).to.have.length(4);
    // Only the newest works.
    const ok = await verify(person, links[0]!);
    expect(ok.status, ok.text).to.equal(200);
    const done = await resend(person);
    expect(done.status).to.equal(200);
    expect(done.body.emailVerified).to.equal(true);
  });

  it('a link is used once even by confirmations at the same moment: one verifies, the others are refused', async () => {
    const person = await signUp(address('race'), 'Racer');
    const token = await verificationToken(stack.MAILPIT_URL, person.email);
    const answers = await Promise.all(Array.from({ length: 5 }, () => verify(person, token)));
    expect(answers.map((a) => a.status).sort()).to.deep.equal([200, 400, 400, 400, 400]);
    expect((await me(person)).emailVerified).to.equal(true);
    // The link is spent: the account store holds none now.
    const stored = await db()
      .collection('accounts')
      .findOne({ _id: person.email as never });
    expect(stored?.verification ?? null).to.equal(null);
  });

  it("no link's secret is in any event on the accounts topic, the account store or a log line", async () => {
    const person = await signUp(address('secret'), 'Secret');
    expect((await resend(person)).status).to.equal(202);
    const secrets = [
      await verificationToken(stack.MAILPIT_URL, person.email, 1),
      await verificationToken(stack.MAILPIT_URL, person.email, 2),
    ];
    // The newest link (the resend's) verifies; the welcome's was replaced.
    expect((await verify(person, secrets[1]!)).status).to.equal(200);
    const everyLink = new Set<string>(secrets);
    // Every other spec's link so far, too (the same database and topics).
    for (const email of (await db().collection('accounts').find().toArray()).map((a) => String(a._id)))
      for (const t of await verificationLinksTo(stack.MAILPIT_URL, email)) everyLink.add(t);

    const raw = await topicBytes(`${platform.runtime.catalog.topicPrefix}accounts.events`);
    const stored = JSON.stringify(await db().collection('accounts').find().toArray());
    const logs = logLines.join('\n');
    expect(raw.length).to.be.greaterThan(0);
    for (const t of everyLink) {
      expect(raw.includes(Buffer.from(t)), 'a link secret in an accounts event').to.equal(false);
      expect(stored.includes(t), 'a link secret in the account store').to.equal(false);
      expect(logs.includes(t), 'a link secret in a log line').to.equal(false);
    }
  });

  /** Every message value on a topic so far, concatenated, as the broker holds them. */
  async function topicBytes(topic: string): Promise<Buffer> {
    const admin = platform.runtime.kafka.admin();
    await admin.connect();
    const ends = await admin.fetchTopicOffsets(topic);
    await admin.disconnect();
    const want = new Map(ends.map((p) => [p.partition, BigInt(p.high)]));
    const consumer = platform.runtime.kafka.consumer({ groupId: `verify-scan-${randomUUID()}` });
    const chunks: Buffer[] = [];
    const reached = new Map<number, bigint>();
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const complete = () => [...want].every(([p, high]) => high === 0n || (reached.get(p) ?? -1n) + 1n >= high);
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        if (message.value) chunks.push(message.value);
        reached.set(partition, BigInt(message.offset));
      },
    });
    await eventually('the accounts topic read to its end', async () => (complete() ? true : undefined));
    await consumer.disconnect();
    return Buffer.concat(chunks);
  }
});
