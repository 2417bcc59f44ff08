import { randomInt, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Document } from 'mongodb';
import { freePort } from '../../deploy/local/processes.ts';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { projectionCollection } from '../../events/collections.ts';
import type { Projection } from '../../events/projection.ts';
import { accountsService } from '../../services/accounts/accounts.service.ts';
import { usersProjection } from '../../services/accounts/users.projection.ts';
import { billingService } from '../../services/billing/billing.service.ts';
import { getSubscription, subscriptionsProjection } from '../../services/billing/subscriptions.projection.ts';
import { webhookIngressService } from '../../services/billing/webhook-ingress.service.ts';
import { hashKey, isWellFormedKey } from '../../services/keys/key-format.ts';
import { getKeyBySubscription, keysProjection } from '../../services/keys/keys.projection.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { mailerService } from '../../services/mailer/mailer.service.ts';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { eventually, testEnv, testLogger } from '../support/env.ts';
import {
  deliver as deliverWebhook,
  invoicePayload,
  providerTime,
  subscriptionPayload,
  type Payload,
  type PayloadOverrides,
} from '../support/lemonsqueezy.ts';
import { verifyEmail } from '../support/email-verification.ts';
import { mailTo, type SentMail } from '../support/mailpit.ts';
import { replayWith } from '../support/replay.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';
import { useContractCheck } from '../support/contract-check.ts';

const SIGNING_SECRET = 'e2e-signing-secret-0123456789';
const SHARED_SECRET = 'ab'.repeat(32);
const PRO_VARIANT = 301789;
const TEAM_VARIANT = 301790;

describe('payments -> subscriptions -> API keys and their e-mails (e2e)', function () {
  this.timeout(90_000);
  let stack: StackEnv;
  let platform: RunningPlatform;
  let ports: { accounts: number; keys: number; webhooks: number };

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    stack = await useStack();
    if (!stack.MAILPIT_URL) this.skip();
    ports = { accounts: await freePort(), keys: await freePort(), webhooks: await freePort() };
    platform = await startServices(
      [accountsService, keysService, webhookIngressService, billingService, mailerService],
      testEnv(stack, {
        ACCOUNTS_PORT: String(ports.accounts),
        KEYS_PORT: String(ports.keys),
        WEBHOOKS_PORT: String(ports.webhooks),
        PAYMENT_WEBHOOK_SECRET: SIGNING_SECRET,
        WEBHOOK_SECRET: SHARED_SECRET,
        KEY_ENCRYPTION_KEY: 'cd'.repeat(32),
        PAYMENT_VARIANT_TIERS: `${PRO_VARIANT}:pro,${TEAM_VARIANT}:team`,
        REACTIVATE_URL: 'https://svc.example/reactivate',
        DEADLINE_INTERVAL_MS: '200',
      }),
      testLogger(),
    );
  });

  after(async () => {
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
  });

  // Every answer of this spec, checked against the answering face's OpenAPI document.
  useContractCheck();

  const db = () => platform.runtime.mongo.db;
  const newSubscription = () => ({ id: String(randomInt(10_000_000, 99_999_999)), email: `buyer-${randomUUID()}@example.test` });

  const deliver = async (payload: Payload): Promise<number> =>
    (await deliverWebhook(`http://127.0.0.1:${ports.webhooks}`, SIGNING_SECRET, payload)).status;

  const subscriptionEvent = (name: string, sub: { id: string; email: string }, o: PayloadOverrides = {}) =>
    subscriptionPayload(name, {
      subscriptionId: sub.id,
      userId: null,
      ...o,
      attributes: { user_email: sub.email, variant_id: PRO_VARIANT, ...o.attributes },
    });

  const until = <T>(what: string, check: () => Promise<T | undefined>) => eventually(what, check, 30_000);
  const subscriptionIn = (id: string, status: string) =>
    until(`subscription ${id} ${status}`, async () => {
      const s = await getSubscription(db(), id);
      return s?.status === status ? s : undefined;
    });
  const keyOf = (
    id: string,
    check: (k: NonNullable<Awaited<ReturnType<typeof getKeyBySubscription>>>) => boolean = (k) => k.keyHash !== null,
  ) =>
    until(`key of ${id}`, async () => {
      const k = await getKeyBySubscription(db(), id);
      return k && check(k) ? k : undefined;
    });
  const mailsTo = async (address: string, subject: RegExp, count = 1): Promise<SentMail[]> =>
    until(`${count} mail(s) "${subject.source}" to ${address}`, async () => {
      const mails = (await mailTo(stack.MAILPIT_URL, address)).filter((m) => subject.test(m.Subject));
      return mails.length >= count ? mails : undefined;
    });

  it('a new subscription gets one key by e-mail; the key is stored only hashed; the account follows to pro', async () => {
    const sub = newSubscription();
    const signup = await fetch(`http://127.0.0.1:${ports.accounts}/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: sub.email, password: 'buyer password', name: 'Buyer' }),
    });
    const { token } = (await signup.json()) as { token: string };
    // Linked by e-mail (no user_id in the webhook): only to an account that verified the address.
    await verifyEmail(stack, `http://127.0.0.1:${ports.accounts}`, sub.email, token);

    expect(await deliver(subscriptionEvent('subscription_created', sub))).to.equal(200);
    // The issuer writes the key's hash itself, and the projection the subscription's status from the
    // event: either may land first (CI once read the hash before the status).
    const key = await keyOf(sub.id, (k) => k.keyHash !== null && k.subscriptionStatus !== null);
    expect(key).to.include({ tier: 'pro', status: 'active', email: sub.email, subscriptionStatus: 'active' });
    const [mail] = await mailsTo(sub.email, /API key/);
    const apiKey = /svc_[A-Za-z0-9]{33}/.exec(mail!.Text)?.[0];
    expect(apiKey && isWellFormedKey(apiKey)).to.equal(true);
    expect(hashKey(apiKey!)).to.equal(key.keyHash);
    expect(key.last4).to.equal(apiKey!.slice(-4));
    const stored = JSON.stringify(await (await projectionCollection(db(), 'keys')).find().toArray());
    expect(stored).not.to.include(apiKey!);

    const me = await until('the account at pro', async () => {
      const res = await fetch(`http://127.0.0.1:${ports.accounts}/auth/me`, { headers: { authorization: `Bearer ${token}` } });
      const body = (await res.json()) as { tier: string };
      return body.tier === 'pro' ? body : undefined;
    });
    expect(me.tier).to.equal('pro');
  });

  it('created -> payment_success -> cancelled keeps pro until ends_at, mails the end date, then the deadline drops it to free', async () => {
    const sub = newSubscription();
    await deliver(subscriptionEvent('subscription_created', sub));
    await keyOf(sub.id);
    await deliver(
      invoicePayload('subscription_payment_success', {
        subscriptionId: sub.id,
        invoiceId: randomInt(1e6, 9e6),
        attributes: { user_email: sub.email },
      }),
    );
    const endsAt = new Date(Date.now() + 3000);
    await deliver(subscriptionEvent('subscription_cancelled', sub, { attributes: { ends_at: providerTime(endsAt) } }));
    const cancelled = await subscriptionIn(sub.id, 'cancelled');
    expect(cancelled.endsAt?.getTime()).to.equal(Math.floor(endsAt.getTime()));
    expect((await getKeyBySubscription(db(), sub.id))?.tier).to.equal('pro');
    const [mail] = await mailsTo(sub.email, /cancel/i);
    const day = endsAt.toLocaleDateString('en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });
    expect(mail!.Text).to.include(day);
    expect(mail!.Text).to.include('https://example.lemonsqueezy.com/billing');

    await subscriptionIn(sub.id, 'ended');
    const key = await keyOf(sub.id, (k) => k.tier === 'free');
    expect(key.subscriptionStatus).to.equal('ended');
    expect(await mailTo(stack.MAILPIT_URL, sub.email).then((m) => m.filter((x) => /cancel/i.test(x.Subject)))).to.have.length(1);
  });

  it('created -> cancelled -> resumed is active again with the same key', async () => {
    const sub = newSubscription();
    await deliver(subscriptionEvent('subscription_created', sub));
    const first = await keyOf(sub.id);
    await deliver(
      subscriptionEvent('subscription_cancelled', sub, { attributes: { ends_at: providerTime(new Date(Date.now() + 3_600_000)) } }),
    );
    await subscriptionIn(sub.id, 'cancelled');
    await deliver(subscriptionEvent('subscription_resumed', sub));
    const resumed = await subscriptionIn(sub.id, 'active');
    expect(resumed.endsAt).to.equal(null);
    const key = await keyOf(sub.id, (k) => k.subscriptionStatus === 'active');
    expect(key.keyHash).to.equal(first.keyHash);
    expect(key.tier).to.equal('pro');
  });

  it('payment_failed: past_due, access kept, an e-mail with the update-payment link; expired: free', async () => {
    const sub = newSubscription();
    await deliver(subscriptionEvent('subscription_created', sub));
    await keyOf(sub.id);
    await deliver(
      invoicePayload('subscription_payment_failed', {
        subscriptionId: sub.id,
        invoiceId: randomInt(1e6, 9e6),
        attributes: { user_email: sub.email },
      }),
    );
    await subscriptionIn(sub.id, 'past_due');
    expect((await getKeyBySubscription(db(), sub.id))?.tier).to.equal('pro');
    const [mail] = await mailsTo(sub.email, /payment/i);
    expect(mail!.Text).to.include('https://example.lemonsqueezy.com/subscription/');

    await deliver(subscriptionEvent('subscription_expired', sub));
    await subscriptionIn(sub.id, 'ended');
    await keyOf(sub.id, (k) => k.tier === 'free');
  });

  it('a duplicate delivery has one effect and an out-of-order older update changes nothing', async () => {
    const sub = newSubscription();
    const created = subscriptionEvent('subscription_created', sub);
    expect(await deliver(created)).to.equal(200);
    expect(await deliver(created)).to.equal(200);
    const older = subscriptionEvent('subscription_updated', sub, { attributes: { variant_id: TEAM_VARIANT } });
    const newer = subscriptionEvent('subscription_updated', sub, {
      attributes: { variant_id: PRO_VARIANT, renews_at: providerTime(new Date(Date.now() + 86_400_000)) },
    });
    await deliver(newer);
    await deliver(older);
    await deliver(newer);
    const renewed = await until('the newer update', async () => {
      const s = await getSubscription(db(), sub.id);
      return s && s.lastProviderUpdatedAt?.toISOString() === new Date(String(newer.data.attributes.updated_at)).toISOString()
        ? s
        : undefined;
    });
    // the older one (team) arrived after it: still pro
    expect(renewed.tier).to.equal('pro');
    await mailsTo(sub.email, /API key/);
    const keyMails = (await mailTo(stack.MAILPIT_URL, sub.email)).filter((m) => /API key/.test(m.Subject));
    expect(keyMails).to.have.length(1);
    const keys = await (await projectionCollection(db(), 'keys')).countDocuments({ subscriptionId: sub.id });
    expect(keys).to.equal(1);
  });

  it('an unknown variant goes to the dead-letter topic with a clear error, not a silent free', async () => {
    const sub = newSubscription();
    const dlqBefore = await platform.runtime.admin.fetchTopicOffsets(`${platform.runtime.catalog.topicOf('payment.webhook-received')}.dlq`);
    const before = dlqBefore.reduce((n, p) => n + Number(p.high), 0);
    expect(await deliver(subscriptionEvent('subscription_created', sub, { attributes: { variant_id: 999_999 } }))).to.equal(200);
    await until('a dead letter', async () => {
      const after = (
        await platform.runtime.admin.fetchTopicOffsets(`${platform.runtime.catalog.topicOf('payment.webhook-received')}.dlq`)
      ).reduce((n, p) => n + Number(p.high), 0);
      return after > before ? true : undefined;
    });
    expect(await getSubscription(db(), sub.id)).to.equal(null);
    expect(await getKeyBySubscription(db(), sub.id)).to.equal(null);
  });

  describe('POST /generate', () => {
    const generate = (body: unknown, secret = SHARED_SECRET) =>
      fetch(`http://127.0.0.1:${ports.keys}/generate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
        body: JSON.stringify(body),
      });
    const valid = () => ({
      customerId: `cus-${randomUUID()}`,
      email: 'api@example.test',
      tier: 'team',
      subscriptionId: `api-${randomUUID()}`,
    });

    it('issues a key, stored (hashed) before the answer, and refuses a second for the subscription', async () => {
      const body = valid();
      const res = await generate(body);
      expect(res.status).to.equal(201);
      const answer = (await res.json()) as Record<string, string>;
      expect(isWellFormedKey(answer.apiKey!)).to.equal(true);
      expect(answer).to.include({ tier: 'team', customerId: body.customerId, subscriptionId: body.subscriptionId });
      expect(new Date(answer.createdAt!).toISOString()).to.equal(answer.createdAt);
      const stored = await getKeyBySubscription(db(), body.subscriptionId);
      expect(stored?.keyHash).to.equal(hashKey(answer.apiKey!));
      expect(stored?.tier).to.equal('team');
      const again = await generate(body);
      expect(again.status).to.equal(409);
    });

    it('answers 401 for a wrong or missing secret and 400 for a bad body, with JSON errors', async () => {
      const wrong = await generate(valid(), 'cd'.repeat(32));
      expect(wrong.status).to.equal(401);
      expect(JSON.stringify(await wrong.json())).not.to.include(SHARED_SECRET);
      const none = await fetch(`http://127.0.0.1:${ports.keys}/generate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(valid()),
      });
      expect(none.status).to.equal(401);
      const badTier = await generate({ ...valid(), tier: 'gold' });
      expect(badTier.status).to.equal(400);
      expect(((await badTier.json()) as { error: string }).error).to.match(/tier must be one of free, pro, team/);
      const noEmail = await generate({ ...valid(), email: undefined });
      expect(noEmail.status).to.equal(400);
    });
  });

  it('replaying subscriptions, keys and users rebuilds them identically, issues no key and sends no e-mail', async function () {
    this.timeout(180_000);
    const sub = newSubscription();
    await deliver(subscriptionEvent('subscription_created', sub));
    await keyOf(sub.id);
    await mailsTo(sub.email, /API key/);
    const rt = platform.runtime;
    const keyEventsBefore = (await rt.admin.fetchTopicOffsets(rt.catalog.topicOf('key.generated'))).reduce((n, p) => n + Number(p.high), 0);
    const mailsBefore = ((await (await fetch(`${stack.MAILPIT_URL}/api/v1/messages?limit=1`)).json()) as { total: number }).total;
    for (const projection of [subscriptionsProjection, keysProjection, usersProjection] as unknown as Projection<Document>[]) {
      const before = await (await projectionCollection(db(), projection.collection)).find().sort({ _id: 1 }).toArray();
      await replayWith(rt, projection, db());
      const after = await (await projectionCollection(db(), projection.collection)).find().sort({ _id: 1 }).toArray();
      expect(after, projection.name).to.deep.equal(before);
    }
    expect((await rt.admin.fetchTopicOffsets(rt.catalog.topicOf('key.generated'))).reduce((n, p) => n + Number(p.high), 0)).to.equal(
      keyEventsBefore,
    );
    const mailsAfter = ((await (await fetch(`${stack.MAILPIT_URL}/api/v1/messages?limit=1`)).json()) as { total: number }).total;
    expect(mailsAfter).to.equal(mailsBefore);
  });
});

describe('webhooks billing does not act on: test mode, another store (e2e)', function () {
  this.timeout(90_000);
  const STORE_ID = 31120;
  let stack: StackEnv;
  let platform: RunningPlatform;
  let webhooks: string;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    stack = await useStack();
    if (!stack.MAILPIT_URL) this.skip();
    const ports = { keys: await freePort(), webhooks: await freePort() };
    platform = await startServices(
      [keysService, webhookIngressService, billingService, mailerService],
      testEnv(stack, {
        KEYS_PORT: String(ports.keys),
        WEBHOOKS_PORT: String(ports.webhooks),
        PAYMENT_WEBHOOK_SECRET: SIGNING_SECRET,
        WEBHOOK_SECRET: SHARED_SECRET,
        KEY_ENCRYPTION_KEY: 'cd'.repeat(32),
        PAYMENT_VARIANT_TIERS: `${PRO_VARIANT}:pro`,
        PAYMENT_ALLOW_TEST_MODE: 'false',
        PAYMENT_STORE_ID: String(STORE_ID),
        // One partition: billing handles the webhooks in the order they came, so a later one
        // processed proves the earlier ones were handled (and left nothing behind).
        KAFKA_TOPIC_PARTITIONS: '1',
      }),
      testLogger(),
    );
    webhooks = `http://127.0.0.1:${ports.webhooks}`;
  });

  after(async () => {
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
  });

  // Every answer of this spec, checked against the answering face's OpenAPI document.
  useContractCheck();

  const db = () => platform.runtime.mongo.db;
  const created = (o: { store: number; testMode: boolean }) => {
    const sub = { id: String(randomInt(10_000_000, 99_999_999)), email: `scope-${randomUUID()}@example.test` };
    const payload = subscriptionPayload('subscription_created', {
      subscriptionId: sub.id,
      userId: null,
      meta: { test_mode: o.testMode },
      attributes: { user_email: sub.email, variant_id: PRO_VARIANT, store_id: o.store, test_mode: o.testMode },
    });
    return { sub, payload };
  };

  it("acknowledges a test-mode and another store's subscription_created as ignored: no subscription, no key, no e-mail", async () => {
    const testMode = created({ store: STORE_ID, testMode: true });
    const otherStore = created({ store: STORE_ID + 1, testMode: false });
    const live = created({ store: STORE_ID, testMode: false });

    // Acknowledged, so the provider stops retrying; in order, one after the other.
    const first = await deliverWebhook(webhooks, SIGNING_SECRET, testMode.payload);
    const second = await deliverWebhook(webhooks, SIGNING_SECRET, otherStore.payload);
    const third = await deliverWebhook(webhooks, SIGNING_SECRET, live.payload);
    expect([first.status, second.status, third.status]).to.deep.equal([200, 200, 200]);

    // The live one's key e-mail: billing, the issuer and the mailer have all passed the two before it.
    await eventually(
      "the live subscription's key e-mail",
      async () => {
        const mails = (await mailTo(stack.MAILPIT_URL, live.sub.email)).filter((m) => /API key/.test(m.Subject));
        return mails.length > 0 ? mails : undefined;
      },
      30_000,
    );
    for (const ignored of [testMode.sub, otherStore.sub]) {
      expect(await getSubscription(db(), ignored.id), ignored.id).to.equal(null);
      expect(await getKeyBySubscription(db(), ignored.id), ignored.id).to.equal(null);
      expect(await mailTo(stack.MAILPIT_URL, ignored.email), ignored.email).to.have.length(0);
    }
    expect(first.body).to.deep.equal({ received: true, ignored: true, reason: 'test-mode' });
    expect(second.body).to.deep.equal({ received: true, ignored: true, reason: 'other-store' });
    expect(third.body).to.deep.equal({ received: true });
  });
});
