import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { billingCommand } from '../../app/cli/billing.ts';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { freePort } from '../../deploy/local/processes.ts';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { Effects } from '../../events/effects.ts';
import { accountsService } from '../../services/accounts/accounts.service.ts';
import { billingService } from '../../services/billing/billing.service.ts';
import { PRICING_CSP } from '../../services/billing/pricing/pricing.routes.ts';
import { lemonSqueezyProvider } from '../../services/billing/provider-api.ts';
import { RECONCILIATION_LEASE, ReconciliationScheduler } from '../../services/billing/reconciler.ts';
import { getSubscription } from '../../services/billing/subscriptions.projection.ts';
import { webhookIngressService } from '../../services/billing/webhook-ingress.service.ts';
import { getKeyBySubscription } from '../../services/keys/keys.projection.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { TIERS, limitsOf } from '../../services/kernel/tiers.ts';
import { mailerService } from '../../services/mailer/mailer.service.ts';
import { launchChromiumForTests } from '../integration/vision/chromium-under-test.ts';
import { useContractCheck } from '../support/contract-check.ts';
import { eventually, testEnv, testLogger } from '../support/env.ts';
import { deliver, type JsonObject, type Payload } from '../support/lemonsqueezy.ts';
import { mailTo } from '../support/mailpit.ts';
import { verifyEmail } from '../support/email-verification.ts';
import { type Answer, ProviderReplay, recorded, type SentToProvider } from '../support/provider-replay.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';

const API_KEY = `eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.e2e-${'k'.repeat(40)}`;
const STORE = '31120';
const PRO_VARIANT = '301789';
const TEAM_VARIANT = '301790';
const SIGNING_SECRET = 'e2e-signing-secret-0123456789';

/** The provider's API, as recorded; the e-mails of its subscriptions are this run's own (Mailpit is shared). */
describe('the way in: checkout, the pricing page and reconciliation with the provider (e2e, provider replayed)', function () {
  this.timeout(90_000);
  let stack: StackEnv;
  let env: NodeJS.ProcessEnv;
  let platform: RunningPlatform;
  let provider: ProviderReplay;
  let accounts: string;
  let webhooks: string;
  let checkoutAnswer: () => Answer | 'unreachable' = () => ({ status: 201, body: recorded('checkout-created') });
  const run = randomUUID().slice(0, 8);
  const emails: Record<string, string> = {
    'ada@example.com': `ada-${run}@example.test`,
    'grace@example.com': `grace-${run}@example.test`,
    'alan@example.com': `alan-${run}@example.test`,
  };
  const checkoutUrl = (recorded('checkout-created').data as { attributes: { url: string } }).attributes.url;

  /** A page of the store's subscriptions as recorded, with this run's e-mails. */
  const subscriptionsPage = (n: number): JsonObject => {
    const page = recorded(`subscriptions-page-${n}`);
    for (const s of page.data as { attributes: JsonObject }[]) s.attributes.user_email = emails[s.attributes.user_email as string]!;
    return page;
  };
  const resource = (id: string) =>
    [...(subscriptionsPage(1).data as JsonObject[]), ...(subscriptionsPage(2).data as JsonObject[])].find((s) => s.id === id)!;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    stack = await useStack();
    if (!stack.MAILPIT_URL) this.skip();
    provider = new ProviderReplay();
    provider.answer(
      'POST',
      (p) => p === '/v1/checkouts',
      () => checkoutAnswer(),
    );
    provider.answer(
      'GET',
      (p) => p.startsWith('/v1/subscriptions?'),
      (req) => ({ status: 200, body: subscriptionsPage(Number(new URL(req.path, 'https://x').searchParams.get('page[number]'))) }),
    );
    const ports = { accounts: await freePort(), keys: await freePort(), webhooks: await freePort() };
    env = testEnv(stack, {
      ACCOUNTS_PORT: String(ports.accounts),
      KEYS_PORT: String(ports.keys),
      WEBHOOKS_PORT: String(ports.webhooks),
      PAYMENT_WEBHOOK_SECRET: SIGNING_SECRET,
      WEBHOOK_SECRET: 'ab'.repeat(32),
      KEY_ENCRYPTION_KEY: 'cd'.repeat(32),
      PAYMENT_API_KEY: API_KEY,
      PAYMENT_STORE_ID: STORE,
      PAYMENT_ALLOW_TEST_MODE: 'false',
      PAYMENT_VARIANT_TIERS: `${PRO_VARIANT}:pro,${TEAM_VARIANT}:team`,
    });
    platform = await startServices([accountsService, keysService, webhookIngressService, billingService, mailerService], env, testLogger());
    accounts = `http://127.0.0.1:${ports.accounts}`;
    webhooks = `http://127.0.0.1:${ports.webhooks}`;
  });

  after(async () => {
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
    await provider?.stop();
  });

  useContractCheck();

  const db = () => platform.runtime.mongo.db;
  const signUp = async (email: string): Promise<{ token: string; userId: string }> => {
    const res = await fetch(`${accounts}/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'correct horse battery', name: 'Buyer' }),
    });
    expect(res.status).to.equal(201);
    const body = (await res.json()) as { token: string; user: { id: string } };
    return { token: body.token, userId: body.user.id };
  };
  const checkout = (token: string | null, body: unknown) =>
    fetch(`${accounts}/billing/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
  const checkoutsSent = () => provider.sent.filter((r) => r.method === 'POST' && r.path === '/v1/checkouts');
  const checkoutOf = (request: SentToProvider) =>
    request.body as {
      data: {
        attributes: { checkout_data: { email: string; custom: { user_id: string } } };
        relationships: { store: { data: { id: string } }; variant: { data: { id: string } } };
      };
    };

  it("answers the provider's checkout URL; the SDK's request carries the account id, the tier's variant, the store and the API key", async () => {
    const email = `buyer-${randomUUID()}@example.test`;
    const { token, userId } = await signUp(email);
    for (const [tier, variant] of [
      ['pro', PRO_VARIANT],
      ['team', TEAM_VARIANT],
    ] as const) {
      const before = checkoutsSent().length;
      const res = await checkout(token, { tier });
      expect(res.status).to.equal(201);
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(await res.json()).to.deep.equal({ url: checkoutUrl });
      const sent = checkoutsSent().slice(before);
      expect(sent).to.have.length(1);
      expect(sent[0]!.headers.authorization).to.equal(`Bearer ${API_KEY}`);
      const { data } = checkoutOf(sent[0]!);
      expect(data.attributes.checkout_data.custom).to.deep.equal({ user_id: userId });
      expect(data.attributes.checkout_data.email).to.equal(email);
      expect(data.relationships.variant.data.id).to.equal(variant);
      expect(data.relationships.store.data.id).to.equal(STORE);
    }
  });

  it('refuses without an account token and for a tier not for sale; a provider failure is a 502 or 503 without its body', async () => {
    const { token } = await signUp(`buyer-${randomUUID()}@example.test`);
    const before = checkoutsSent().length;
    expect((await checkout(null, { tier: 'pro' })).status).to.equal(401);
    expect((await checkout(token, { tier: 'free' })).status).to.equal(400);
    expect((await checkout(token, {})).status).to.equal(400);
    expect(checkoutsSent().length).to.equal(before);
    try {
      checkoutAnswer = () => ({ status: 401, body: recorded('error-unauthenticated') });
      const refused = await checkout(token, { tier: 'pro' });
      expect(refused.status).to.equal(502);
      const refusedText = await refused.text();
      expect(JSON.parse(refusedText)).to.include({ code: 'PROVIDER_REFUSED' });
      expect(refusedText).not.to.match(/Unauthenticated|Bearer|eyJ0eXAi/);

      checkoutAnswer = () => 'unreachable';
      const away = await checkout(token, { tier: 'pro' });
      expect(away.status).to.equal(503);
      expect(away.headers.get('retry-after')).to.equal('30');
      expect(await away.json()).to.include({ code: 'PROVIDER_UNAVAILABLE' });
    } finally {
      checkoutAnswer = () => ({ status: 201, body: recorded('checkout-created') });
    }
  });

  it('GET /pricing: the three tiers with the limits of the tier table, under a strict CSP, with same-origin assets', async () => {
    const res = await fetch(`${accounts}/pricing`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).to.equal(PRICING_CSP);
    const html = await res.text();
    for (const tier of TIERS) {
      expect(html).to.include(`data-tier="${tier}"`);
      expect(html).to.include(`${limitsOf(tier).requestsPerMinute.toLocaleString('en-US')} requests a minute`);
    }
    expect(html).not.to.include('not configured');
    for (const [path, type] of [
      ['/pricing.js', 'text/javascript; charset=utf-8'],
      ['/pricing.css', 'text/css; charset=utf-8'],
    ] as const) {
      const asset = await fetch(`${accounts}${path}`);
      expect(asset.status, path).to.equal(200);
      expect(asset.headers.get('content-type'), path).to.equal(type);
    }
  });

  describe('the pricing page in a real Chromium', () => {
    let browser: Browser;

    before(async function () {
      this.timeout(600_000); // a first run provisions Chromium
      browser = await launchChromiumForTests();
    });

    after(async () => {
      await browser?.close();
    });

    it("renders the tiers without a CSP complaint; signing in and choosing pro goes to the provider's checkout for that account", async function () {
      this.timeout(60_000);
      const email = `browser-${randomUUID()}@example.test`;
      const { userId } = await signUp(email);
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      page.on('pageerror', (e) => errors.push(e.message));
      // The provider's checkout page itself is not reachable from here: the browser is answered locally.
      await page.route(
        (url) => !url.href.startsWith(accounts),
        (route) =>
          route.request().url() === checkoutUrl
            ? route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>checkout</title>' })
            : route.abort(),
      );
      const res = await page.goto(`${accounts}/pricing`, { waitUntil: 'load' });
      expect(res?.status()).to.equal(200);
      for (const tier of TIERS) await page.locator(`section[data-tier="${tier}"]`).waitFor({ state: 'visible' });
      expect(await page.locator('section[data-tier="team"] [data-price]').textContent()).to.equal('$79');

      const before = checkoutsSent().length;
      await page.getByLabel('E-mail').fill(email);
      await page.getByLabel('Password').fill('correct horse battery');
      await page.getByRole('button', { name: 'Subscribe to pro' }).click();
      await page.waitForURL(checkoutUrl, { timeout: 20_000 });
      const sent = checkoutsSent().slice(before);
      expect(sent).to.have.length(1);
      expect(checkoutOf(sent[0]!).data.attributes.checkout_data.custom).to.deep.equal({ user_id: userId });
      expect(checkoutOf(sent[0]!).data.relationships.variant.data.id).to.equal(PRO_VARIANT);
      expect(errors).to.deep.equal([]);
      await page.close();
    });
  });

  describe('reconciliation (svc billing reconcile) on the recorded state of the store', () => {
    const runReconcile = async (overrides: NodeJS.ProcessEnv = {}) => {
      let out = '';
      let err = '';
      const sink = (write: (s: string) => void) =>
        new Writable({
          write(chunk, _enc, done) {
            write(String(chunk));
            done();
          },
        });
      const code = await billingCommand(['reconcile'], {
        env: { ...env, ...overrides },
        out: sink((s) => (out += s)),
        err: sink((s) => (err += s)),
      });
      return { code, out, err };
    };
    const endOffsets = async () => {
      const prefix = env.KAFKA_TOPIC_PREFIX!;
      const total = async (topic: string) =>
        (await platform.runtime.admin.fetchTopicOffsets(prefix + topic)).reduce((sum, p) => sum + Number(p.high), 0);
      return { webhooks: await total('payments.webhooks'), subscriptions: await total('subscriptions.events') };
    };
    const keyMails = async (address: string) => (await mailTo(stack.MAILPIT_URL, address)).filter((m) => /API key/.test(m.Subject));

    it('records the one subscription the webhooks missed: it appears, linked to its account, its key issued and e-mailed once; a second run changes nothing', async () => {
      // 184220 came in through its webhook; 184231 was paid for but its webhooks never arrived;
      // 183004 expired before we knew it.
      const ada = await signUp(emails['ada@example.com']!);
      const grace = await signUp(emails['grace@example.com']!);
      // Reconciliation's rebuilt webhook names an address, never an account: grace's is linked once she verified it.
      await verifyEmail(stack, accounts, emails['grace@example.com']!, grace.token);
      const webhook: Payload = {
        meta: { event_name: 'subscription_created', webhook_id: randomUUID(), test_mode: false, custom_data: { user_id: ada.userId } },
        data: resource('184220') as Payload['data'],
      };
      expect((await deliver(webhooks, SIGNING_SECRET, webhook)).status).to.equal(200);
      await eventually('the key of 184220', async () => ((await getKeyBySubscription(db(), '184220'))?.keyHash ? true : undefined), 30_000);
      expect(await getSubscription(db(), '184231')).to.equal(null);

      const first = await runReconcile();
      expect(first.code, first.err).to.equal(0);
      expect(first.err).to.include('page 1/2: 2 subscriptions compared, 1 recorded');
      expect(first.err).to.include('page 2/2: 3 subscriptions compared, 1 recorded');
      expect(first.out).to.equal(
        `reconciled store ${STORE}: 3 subscriptions listed, 1 recorded (missed by the webhooks), 1 in step, 1 skipped, 0 unusable\n`,
      );

      const missed = await eventually('subscription 184231', async () => (await getSubscription(db(), '184231')) ?? undefined, 30_000);
      expect(missed).to.include({ status: 'active', tier: 'pro', userId: grace.userId, email: emails['grace@example.com'] });
      const key = await eventually(
        'the key of 184231',
        async () => {
          const k = await getKeyBySubscription(db(), '184231');
          return k?.keyHash ? k : undefined;
        },
        30_000,
      );
      expect(key).to.include({ tier: 'pro', status: 'active' });
      const mails = await eventually(
        'the key e-mail to grace',
        async () => {
          const found = await keyMails(emails['grace@example.com']!);
          return found.length > 0 ? found : undefined;
        },
        30_000,
      );
      expect(mails).to.have.length(1);
      expect(await getSubscription(db(), '183004')).to.equal(null);

      const offsets = await endOffsets();
      const second = await runReconcile();
      expect(second.code, second.err).to.equal(0);
      expect(second.out).to.equal(
        `reconciled store ${STORE}: 3 subscriptions listed, 0 recorded (missed by the webhooks), 2 in step, 1 skipped, 0 unusable\n`,
      );
      expect(await endOffsets()).to.deep.equal(offsets);
      expect(await keyMails(emails['grace@example.com']!)).to.have.length(1);
      expect(await keyMails(emails['alan@example.com']!)).to.have.length(0);
    });

    it('the scheduled pass runs once per interval across replicas, and not while another pass holds the lease', async () => {
      const replica = (clock: () => Date) =>
        new ReconciliationScheduler({
          db: db(),
          publisher: platform.runtime.publisher,
          provider: lemonSqueezyProvider({ apiKey: API_KEY }),
          storeId: STORE,
          variantTiers: platform.runtime.config.variantTiers,
          scope: { storeId: STORE, allowTestMode: false },
          leaseMs: 60_000,
          intervalMs: 86_400_000,
          log: testLogger(),
          clock,
        });
      const offsets = await endOffsets();
      const today = () => new Date('2031-03-04T01:00:00Z');
      const ran = await replica(today).runDue();
      expect(ran).to.deep.include({ listed: 3, published: 0, inStep: 2, skipped: 1 });
      expect(await replica(() => new Date('2031-03-04T23:59:00Z')).runDue()).to.equal('done-already');
      const other = new Effects(db(), { leaseMs: 60_000 });
      await other.claim(RECONCILIATION_LEASE);
      try {
        expect(await replica(() => new Date('2031-03-05T00:01:00Z')).runDue()).to.equal('busy');
      } finally {
        await other.release(RECONCILIATION_LEASE);
      }
      expect(await replica(() => new Date('2031-03-05T00:02:00Z')).runDue()).to.deep.include({ published: 0 });
      expect(await endOffsets()).to.deep.equal(offsets);
    });

    it('exit codes: 1 naming what it cannot use, 69 while another pass holds the lease, 78 without the API key', async () => {
      const offsets = await endOffsets();
      const unusable = await runReconcile({ PAYMENT_VARIANT_TIERS: `${TEAM_VARIANT}:team` });
      expect(unusable.code).to.equal(1);
      expect(unusable.out).to.include(`unusable 184231: variant ${PRO_VARIANT} is not in PAYMENT_VARIANT_TIERS`);
      expect(await endOffsets()).to.deep.equal(offsets);

      const other = new Effects(db(), { leaseMs: 60_000 });
      await other.claim(RECONCILIATION_LEASE);
      try {
        const busy = await runReconcile();
        expect(busy.code).to.equal(69);
        expect(busy.err).to.match(/another reconciliation is running/);
      } finally {
        await other.release(RECONCILIATION_LEASE);
      }

      const unconfigured = await runReconcile({ PAYMENT_API_KEY: undefined });
      expect(unconfigured.code).to.equal(78);
      expect(unconfigured.err).to.include('PAYMENT_API_KEY and PAYMENT_STORE_ID');
    });
  });
});
