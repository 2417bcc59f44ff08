import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { StackEnv } from '../../deploy/local/stack.ts';
import type { SubscriptionCreated } from '../../services/billing/events.ts';
import { hashKey } from '../../services/keys/key-format.ts';
import type { RunningPlatform } from '../../app/cli/run.ts';
import { eventually } from '../support/env.ts';
import { type KeysPlatform, startKeysPlatform, stopKeysPlatform } from '../support/keys-platform.ts';
import { keysMailedTo, mailTo } from '../support/mailpit.ts';
import { postJson } from '../support/http.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';
import { subscriptionCreated } from '../support/subscriptions.ts';
import { useContractCheck } from '../support/contract-check.ts';

const SHARED_SECRET = 'ab'.repeat(32);
const PRICING_URL = 'https://svc.example/pricing';
const KEY = /svc_[A-Za-z0-9]{33}/g;

describe('key rotation and lifetime: POST /keys/rotate, grace periods, expiry (e2e)', function () {
  this.timeout(90_000);
  let stack: StackEnv;
  let platform: RunningPlatform;
  let keysBase: string;
  let accountsBase: string;
  let premium: KeysPlatform['premium'];
  let running: KeysPlatform | undefined;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    stack = await useStack();
    if (!stack.MAILPIT_URL) this.skip();
    // The premium server validates over HTTP on another "host": the old key must be refused there too.
    running = await startKeysPlatform(stack, PRICING_URL, {
      WEBHOOK_SECRET: SHARED_SECRET,
      KEY_ENCRYPTION_KEY: 'cd'.repeat(32),
      KEY_ROTATIONS_PER_HOUR: '2',
    });
    ({ platform, keys: keysBase, accounts: accountsBase, premium } = running);
  });

  after(() => stopKeysPlatform(running));

  // Every answer of this spec, checked against the answering face's OpenAPI document.
  useContractCheck();

  const post = postJson;
  const rotate = (headers: Record<string, string>, body: unknown = {}) => post(`${keysBase}/keys/rotate`, body, headers);
  const valid = async (apiKey: string) => (await post(`${keysBase}/validate`, { apiKey })).body.valid === true;
  const gated = (apiKey: string) => fetch(`${premium.url}/premium`, { headers: { 'x-api-key': apiKey } });

  /** The keys mailed to an address so far, oldest first. */
  const mailedKeys = (address: string): Promise<string[]> => keysMailedTo(stack.MAILPIT_URL, address);
  const nthKey = (address: string, n: number) =>
    eventually(`key e-mail #${n} to ${address}`, async () => {
      const keys = await mailedKeys(address);
      return keys.length >= n ? keys : undefined;
    });

  /** A paid subscription as billing announces it: the issuer mints its key and the mailer sends it. */
  async function subscribe(email: string, userId: string | null = null): Promise<{ subscriptionId: string; apiKey: string }> {
    const subscriptionId = `sub-${randomUUID()}`;
    const created: SubscriptionCreated = subscriptionCreated({ subscriptionId, userId, email, tier: 'pro' });
    await platform.runtime.publisher.publishOrdered([created]);
    const [apiKey] = await nthKey(email, 1);
    await eventually('the first key valid', async () => ((await valid(apiKey!)) ? true : undefined));
    return { subscriptionId, apiKey: apiKey! };
  }

  it('replaces the key with the key itself and no grace: the old one is refused within a second everywhere, the new one comes by e-mail once', async () => {
    const email = `rotate-${randomUUID().slice(0, 8)}@example.test`;
    const { subscriptionId, apiKey: oldKey } = await subscribe(email);
    expect((await gated(oldKey)).status).to.equal(200);

    const res = await rotate({ 'x-api-key': oldKey }, { graceSeconds: 0 });
    expect(res.status, res.text).to.equal(200);
    expect(res.headers.get('cache-control')).to.equal('no-store');
    expect(res.body).to.include({
      rotated: true,
      subscriptionId,
      replacedLast4: oldKey.slice(-4),
      delivery: 'email',
      replacedValidUntil: null,
    });
    // The new key goes only to the subscription's address, never into the answer.
    expect(res.text).not.to.match(KEY);

    await eventually(
      'the old key refused by /validate and the remote gate',
      async () => {
        const [validated, gate] = await Promise.all([valid(oldKey), gated(oldKey)]);
        return !validated && gate.status === 403 ? true : undefined;
      },
      1000,
    );

    const keys = await nthKey(email, 2);
    const newKey = keys[1]!;
    expect(newKey).not.to.equal(oldKey);
    expect(newKey.slice(-4)).to.equal(res.body.last4);
    expect(await valid(newKey)).to.equal(true);
    expect((await gated(newKey)).status).to.equal(200);
    const mails = (await mailTo(stack.MAILPIT_URL, email)).filter((m) => /API key/.test(m.Subject));
    const rotated = mails.find((m) => m.Text.includes(newKey))!;
    expect(rotated.Subject).to.equal('Your new svc API key');
    expect(rotated.Text).to.include(`ending in ${oldKey.slice(-4)}), which no longer works`);

    // The old key rotates nothing any more, and the new key's e-mail is sent once.
    expect((await rotate({ 'x-api-key': oldKey })).status).to.equal(401);
    // The mailer records each key e-mail as done once sent; a second send would need a second claim.
    await eventually("the new key's e-mail recorded as sent", async () =>
      (await platform.runtime.mongo.db.collection('effects').findOne({ _id: `key-email:${hashKey(newKey)}` } as never))?.status === 'done'
        ? true
        : undefined,
    );
    expect(await mailedKeys(email)).to.deep.equal([oldKey, newKey]);
  });

  it('replaces a revoked key for the signed-in owner, and no one else; a few times an hour', async () => {
    const email = `owner-${randomUUID().slice(0, 8)}@example.test`;
    const signup = await post(`${accountsBase}/auth/signup`, { email, password: 'correct horse battery', name: 'Owner' });
    expect(signup.status, signup.text).to.equal(201);
    const token = signup.body.token as string;
    const userId = (signup.body.user as { id: string }).id;
    const { subscriptionId, apiKey: first } = await subscribe(email, userId);

    const revoked = await post(`${keysBase}/revoke`, { subscriptionId }, { authorization: `Bearer ${SHARED_SECRET}` });
    expect(revoked.status).to.equal(200);
    await eventually('the revoked key refused', async () => ((await valid(first)) ? undefined : true), 1000);
    // A revoked key authenticates nothing, not even its own replacement.
    expect((await rotate({ 'x-api-key': first })).status).to.equal(401);

    const intruder = await post(`${accountsBase}/auth/signup`, {
      email: `intruder-${randomUUID().slice(0, 8)}@example.test`,
      password: 'correct horse battery',
      name: 'Eve',
    });
    expect((await rotate({ authorization: `Bearer ${intruder.body.token as string}` }, { subscriptionId })).status).to.equal(404);
    expect((await rotate({ authorization: 'Bearer not.a.token' }, { subscriptionId })).status).to.equal(401);

    const res = await rotate({ authorization: `Bearer ${token}` }, { subscriptionId });
    expect(res.status, res.text).to.equal(200);
    const second = (await nthKey(email, 2))[1]!;
    await eventually('the replacement valid', async () => ((await valid(second)) ? true : undefined), 1000);
    expect(await valid(first)).to.equal(false);

    // A revoked key gets no grace period: it stays refused beside its replacement.
    expect(res.body.replacedValidUntil).to.be.a('string');
    // KEY_ROTATIONS_PER_HOUR=2: a second rotation passes, a third within the hour does not.
    expect((await rotate({ authorization: `Bearer ${token}` }, { subscriptionId, graceSeconds: 0 })).status).to.equal(200);
    const third = await rotate({ authorization: `Bearer ${token}` }, { subscriptionId });
    expect(third.status).to.equal(429);
    expect(Number(third.headers.get('retry-after'))).to.be.within(1, 3600);
    const keys = await nthKey(email, 3);
    await eventually('only the newest key valid', async () => ((await valid(keys[2]!)) && !(await valid(second)) ? true : undefined), 1000);
  });

  /** /validate's answer for a key: valid, or the refusal's code. */
  const verdict = async (apiKey: string) => {
    const body = (await post(`${keysBase}/validate`, { apiKey })).body;
    return body.valid === true ? 'valid' : String(body.code);
  };

  it('keeps the replaced key working beside the new one for the grace period, then refuses it as EXPIRED', async () => {
    const email = `grace-${randomUUID().slice(0, 8)}@example.test`;
    const { subscriptionId, apiKey: oldKey } = await subscribe(email);
    const res = await rotate({ 'x-api-key': oldKey }, { graceSeconds: 3 });
    expect(res.status, res.text).to.equal(200);
    const until = Date.parse(String(res.body.replacedValidUntil));
    expect(until - Date.parse(String(res.body.createdAt))).to.be.within(2500, 3500);

    const newKey = (await nthKey(email, 2))[1]!;
    await eventually('the new key valid', async () => ((await verdict(newKey)) === 'valid' ? true : undefined), 1000);
    // Both work, through /validate and through the remote gate, until the grace period ends.
    if (Date.now() < until - 500) {
      expect(await verdict(oldKey)).to.equal('valid');
      expect((await gated(oldKey)).status).to.equal(200);
    }
    // GET /usage tells each key's own dates: the new one made by the rotation, the old one ending with its grace.
    const facts = async (apiKey: string) =>
      ((await (await fetch(`${keysBase}/usage`, { headers: { authorization: `Bearer ${apiKey}` } })).json()) as { key?: unknown }).key;
    expect(await facts(newKey)).to.deep.equal({ last4: newKey.slice(-4), createdAt: res.body.createdAt, expiresAt: null });
    if (Date.now() < until - 500) {
      expect(await facts(oldKey)).to.deep.equal({ last4: oldKey.slice(-4), createdAt: null, expiresAt: new Date(until).toISOString() });
    }
    // Replaced, the old key no longer acts for the subscription: it cannot rotate again.
    expect((await rotate({ 'x-api-key': oldKey })).status).to.equal(401);
    const mail = (await mailTo(stack.MAILPIT_URL, email)).find((m) => m.Text.includes(newKey))!;
    expect(mail.Text).to.match(/keeps working until \d+ \w+ \d{4}, \d\d:\d\d UTC/);

    await eventually(
      'the old key EXPIRED once its grace ends',
      async () => ((await verdict(oldKey)) === 'EXPIRED' ? true : undefined),
      10_000,
    );
    expect(Date.now()).to.be.at.least(until);
    expect((await gated(oldKey)).status).to.equal(403);
    expect(await verdict(newKey)).to.equal('valid');
    expect((await platform.runtime.mongo.db.collection('keys').findOne({ _id: subscriptionId } as never))?.previous).to.include({
      keyHash: hashKey(oldKey),
    });
  });

  it('mints a key that expires when told, refused as EXPIRED from then on, and refuses an expiry that is not a future instant with 400', async () => {
    const mint = (body: Record<string, unknown>) =>
      post(
        `${keysBase}/generate`,
        {
          customerId: `cus-${randomUUID().slice(0, 8)}`,
          email: 'expiry@example.test',
          tier: 'pro',
          subscriptionId: `sub-${randomUUID()}`,
          ...body,
        },
        { authorization: `Bearer ${SHARED_SECRET}` },
      );
    for (const expiresAt of ['tomorrow', '2020-01-01T00:00:00Z', 12345, '9999-01-01T00:00:00Z']) {
      const refused = await mint({ expiresAt });
      expect(refused.status, String(expiresAt)).to.equal(400);
      expect(refused.body.error).to.match(/expiresAt/);
    }
    const expiresAt = new Date(Date.now() + 2000).toISOString();
    const minted = await mint({ expiresAt });
    expect(minted.status, minted.text).to.equal(201);
    expect(minted.body.expiresAt).to.equal(expiresAt);
    const apiKey = String(minted.body.apiKey);
    if (Date.now() < Date.parse(expiresAt) - 500) expect(await verdict(apiKey)).to.equal('valid');
    await eventually('the key EXPIRED at its time', async () => ((await verdict(apiKey)) === 'EXPIRED' ? true : undefined), 10_000);
    expect(Date.now()).to.be.at.least(Date.parse(expiresAt));
    expect((await gated(apiKey)).status).to.equal(403);
    // An expired key acts for nothing, not even its own rotation.
    expect((await rotate({ 'x-api-key': apiKey })).status).to.equal(401);

    const forever = await mint({});
    expect(forever.status).to.equal(201);
    expect(forever.body.expiresAt).to.equal(null);
  });
});
