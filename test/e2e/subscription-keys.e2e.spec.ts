import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { projectionCollection } from '../../events/collections.ts';
import { newEvent } from '../../events/envelope.ts';
import type { RunningPlatform } from '../../app/cli/run.ts';
import type { Tier } from '../../services/kernel/tiers.ts';
import { hashKey } from '../../services/keys/key-format.ts';
import { keysProjection } from '../../services/keys/keys.projection.ts';
import { currentPeriod, getUsage } from '../../services/keys/usage.ts';
import { useContractCheck } from '../support/contract-check.ts';
import { eventually } from '../support/env.ts';
import { type KeysPlatform, startKeysPlatform, stopKeysPlatform } from '../support/keys-platform.ts';
import { postJson } from '../support/http.ts';
import { keysMailedTo, mailTo } from '../support/mailpit.ts';
import { replayWith } from '../support/replay.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';
import { subscriptionCreated } from '../support/subscriptions.ts';

const SHARED_SECRET = 'ab'.repeat(32);
const PRICING_URL = 'https://svc.example/pricing';

interface Person {
  email: string;
  userId: string;
  token: string;
}

/**
 * A subscription's keys as one, on real Kafka, FerretDB and Mailpit: a team member's key is refused
 * within a second of the team key's revocation, at /validate and at a premium gate on another host,
 * ends when the team key expires, and carries on across rotations; a rotated key's month goes on
 * from what the key it replaced used, and the quota holds across the rotation.
 */
describe("a subscription's keys as one: member keys follow the team key, one month across rotations (e2e)", function () {
  this.timeout(120_000);
  let stack: StackEnv;
  let platform: RunningPlatform;
  let keys: string;
  let accounts: string;
  let premium: KeysPlatform['premium'];
  let running: KeysPlatform | undefined;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    stack = await useStack();
    if (!stack.MAILPIT_URL) this.skip();
    running = await startKeysPlatform(stack, PRICING_URL, {
      WEBHOOK_SECRET: SHARED_SECRET,
      KEY_ENCRYPTION_KEY: 'cd'.repeat(32),
      CONSOLE_PUBLIC_URL: 'https://console.svc.test',
    });
    ({ platform, keys, accounts, premium } = running);
  });

  after(() => stopKeysPlatform(running));

  useContractCheck();

  const post = postJson;
  const bearer = (p: Person) => ({ authorization: `Bearer ${p.token}` });
  /** /validate's answer for a key: valid, or the refusal's code. */
  const verdict = async (apiKey: string) => {
    const body = (await post(`${keys}/validate`, { apiKey })).body;
    return body.valid === true ? 'valid' : String(body.code);
  };
  const gated = async (apiKey: string) => (await fetch(`${premium.url}/premium`, { headers: { 'x-api-key': apiKey } })).status;
  const usageOf = async (apiKey: string) => {
    const res = await fetch(`${keys}/usage`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(res.status).to.equal(200);
    return (await res.json()) as { usage: { queries: number }; key?: { last4: string | null; expiresAt: string | null } };
  };
  const mailedKeys = (address: string, n: number) =>
    eventually(`key e-mail #${n} to ${address}`, async () => {
      const found = await keysMailedTo(stack.MAILPIT_URL, address);
      return found.length >= n ? found : undefined;
    });

  async function person(prefix: string): Promise<Person> {
    const email = `${prefix}-${randomUUID().slice(0, 8)}@example.test`;
    const password = `pw-${randomUUID()}`;
    const signup = await post(`${accounts}/auth/signup`, { email, password, name: prefix });
    expect(signup.status, signup.text).to.equal(201);
    const login = await post(`${accounts}/auth/login`, { email, password });
    expect(login.status, login.text).to.equal(200);
    return { email, userId: (signup.body.user as { id: string }).id, token: login.body.token as string };
  }

  async function subscriber(tier: Tier) {
    const p = await person(`owner-${tier}`);
    const subscriptionId = `sub-${randomUUID()}`;
    await platform.runtime.publisher.publishOrdered([subscriptionCreated({ subscriptionId, userId: p.userId, email: p.email, tier })]);
    const [apiKey] = await mailedKeys(p.email, 1);
    await eventually('the first key valid', async () => ((await verdict(apiKey!)) === 'valid' ? true : undefined));
    return { ...p, subscriptionId, apiKey: apiKey! };
  }

  /** The owner invites, the invitee accepts with the mailed token: the member's own key, as mailed. */
  async function join(owner: Person & { subscriptionId: string }, p: Person): Promise<string> {
    const invited = await post(`${keys}/team/invitations`, { subscriptionId: owner.subscriptionId, email: p.email }, bearer(owner));
    expect(invited.status, invited.text).to.equal(201);
    const mail = await eventually(`the invitation to ${p.email}`, async () =>
      (await mailTo(stack.MAILPIT_URL, p.email)).find((m) => m.MessageID.includes(invited.body.invitationId as string)),
    );
    const token = /\/team\/join\?token=([A-Za-z0-9_-]+)/.exec(mail.Text)?.[1];
    expect(token, 'the link in the invitation').to.be.a('string');
    const accepted = await post(`${keys}/team/invitations/accept`, { token }, bearer(p));
    expect(accepted.status, accepted.text).to.equal(200);
    const [apiKey] = await mailedKeys(p.email, 1);
    return apiKey!;
  }

  const rotate = (owner: Person & { subscriptionId: string }, body: Record<string, unknown> = {}) =>
    post(`${keys}/keys/rotate`, { subscriptionId: owner.subscriptionId, ...body }, bearer(owner));

  it("revoking the team key refuses its members' keys within a second at /validate and at a gate; a join meanwhile gets a refused key; the owner's new key brings them back", async () => {
    const owner = await subscriber('team');
    const ana = await person('ana');
    const anaKey = await join(owner, ana);
    expect(await verdict(anaKey)).to.equal('valid');
    expect(await gated(anaKey)).to.equal(200);

    const revoked = await post(`${keys}/revoke`, { subscriptionId: owner.subscriptionId }, { authorization: `Bearer ${SHARED_SECRET}` });
    expect(revoked.status, revoked.text).to.equal(200);
    await eventually(
      "the member's key refused at /validate and at the gate",
      async () => {
        const [v, g] = await Promise.all([verdict(anaKey), gated(anaKey)]);
        return v === 'DISABLED' && g === 403 ? true : undefined;
      },
      1000,
    );
    expect(await verdict(owner.apiKey)).to.equal('DISABLED');

    // Joining a team whose key is revoked mints no working key.
    const bo = await person('bo');
    const boKey = await join(owner, bo);
    expect(await verdict(boKey)).to.equal('DISABLED');
    expect(await gated(boKey)).to.equal(403);

    // The owner's way back (a rotation with the session) is the team's: the members' keys work again.
    const rotated = await rotate(owner, { graceSeconds: 0 });
    expect(rotated.status, rotated.text).to.equal(200);
    const [, newKey] = await mailedKeys(owner.email, 2);
    await eventually(
      'the new team key and both member keys valid',
      async () => {
        const all = await Promise.all([verdict(newKey!), verdict(anaKey), verdict(boKey)]);
        return all.every((v) => v === 'valid') ? true : undefined;
      },
      1000,
    );
    expect(await gated(boKey)).to.equal(200);
  });

  it("a rotation keeps member keys working past the replaced key's grace; the team key's expiry ends them, and a later key brings them back", async () => {
    const owner = await subscriber('team');
    const cy = await person('cy');
    const cyKey = await join(owner, cy);

    // Rotated with a short grace: the old key ends, the member's goes on under the new one.
    const first = await rotate(owner, { graceSeconds: 1 });
    expect(first.status, first.text).to.equal(200);
    await eventually('the replaced key EXPIRED', async () => ((await verdict(owner.apiKey)) === 'EXPIRED' ? true : undefined), 10_000);
    expect(await verdict(cyKey)).to.equal('valid');
    expect(await gated(cyKey)).to.equal(200);

    // Rotated with an expiry and nothing after it: the member's key ends with the team key.
    const expiresAt = new Date(Date.now() + 3000).toISOString();
    const second = await rotate(owner, { graceSeconds: 0, expiresAt });
    expect(second.status, second.text).to.equal(200);
    const mailed = await mailedKeys(owner.email, 3);
    const teamKey = mailed[2]!;
    await eventually('the new team key valid', async () => ((await verdict(teamKey)) === 'valid' ? true : undefined), 1000);
    if (Date.now() < Date.parse(expiresAt) - 500) {
      expect(await verdict(cyKey)).to.equal('valid');
      // GET /usage tells the member when their key ends: with the team key.
      expect((await usageOf(cyKey)).key?.expiresAt).to.equal(expiresAt);
    }
    await eventually(
      'the member key EXPIRED with the team key',
      async () => ((await verdict(cyKey)) === 'EXPIRED' ? true : undefined),
      10_000,
    );
    expect(Date.now()).to.be.at.least(Date.parse(expiresAt));
    expect(await verdict(teamKey)).to.equal('EXPIRED');
    expect(await gated(cyKey)).to.equal(403);

    const third = await rotate(owner, { graceSeconds: 0 });
    expect(third.status, third.text).to.equal(200);
    await eventually(
      'the member key valid under the next team key',
      async () => ((await verdict(cyKey)) === 'valid' ? true : undefined),
      1000,
    );
  });

  it("a rotated key's month goes on from the uses of the key it replaced, through a gate, members' uses included", async () => {
    const owner = await subscriber('team');
    const dee = await person('dee');
    const deeKey = await join(owner, dee);
    for (const k of [owner.apiKey, owner.apiKey, deeKey]) expect(await gated(k)).to.equal(200);
    await eventually('3 uses counted', async () => ((await usageOf(owner.apiKey)).usage.queries === 3 ? true : undefined));

    const rotated = await rotate(owner, { graceSeconds: 0 });
    expect(rotated.status, rotated.text).to.equal(200);
    const newKey = (await mailedKeys(owner.email, 2))[1]!;
    await eventually('the new key valid', async () => ((await verdict(newKey)) === 'valid' ? true : undefined), 1000);
    expect((await usageOf(newKey)).usage.queries).to.equal(3);
    // Uses of the new key and of the member's add to the same month.
    expect(await gated(newKey)).to.equal(200);
    expect(await gated(deeKey)).to.equal(200);
    await eventually('5 uses counted', async () => ((await usageOf(newKey)).usage.queries === 5 ? true : undefined));
    expect((await usageOf(deeKey)).usage.queries).to.equal(5);
  });

  it('enforces the monthly quota across a rotation: the new key starts where the old one was', async () => {
    const email = `free-${randomUUID().slice(0, 8)}@example.test`;
    const minted = await post(
      `${keys}/generate`,
      { customerId: `cus-${randomUUID().slice(0, 8)}`, email, tier: 'free', subscriptionId: `sub-${randomUUID()}` },
      { authorization: `Bearer ${SHARED_SECRET}` },
    );
    expect(minted.status, minted.text).to.equal(201);
    const oldKey = String(minted.body.apiKey);
    const rt = platform.runtime;
    // 99 of the free tier's 100 queries used, recorded as a gate records them (under the key's hash).
    const oldHash = hashKey(oldKey);
    await rt.publisher.publish(newEvent('usage.incremented', { keyHash: oldHash, metric: 'queries', amount: 99, period: currentPeriod() }));
    await eventually('99 queries counted', async () =>
      (await getUsage(rt.mongo.db, oldHash, currentPeriod())).queries === 99 ? true : undefined,
    );

    const rotated = await post(`${keys}/keys/rotate`, { graceSeconds: 0 }, { 'x-api-key': oldKey });
    expect(rotated.status, rotated.text).to.equal(200);
    const newKey = (await mailedKeys(email, 1))[0]!;
    const first = await eventually(
      'the new key valid',
      async () => {
        const res = await post(`${keys}/validate`, { apiKey: newKey });
        return res.body.valid === true ? res.body : undefined;
      },
      1000,
    );
    expect((first.usage as Record<string, unknown>).queries).to.deep.equal({ used: 99, limit: 100, remaining: 1 });
    // A remote gate is told where the new key's uses count: under the subscription's first key.
    expect(first.meteredAs).to.equal(oldHash);
    expect((await post(`${keys}/validate`, { apiKey: newKey, amount: 2 })).body).to.include({ valid: false, code: 'USAGE_EXCEEDED' });
    const tooMuch = await post(`${keys}/reserve`, { apiKey: newKey, metric: 'queries', amount: 2 });
    expect(tooMuch.body).to.include({ reserved: false, code: 'USAGE_EXCEEDED' });

    // The last query, recorded where the answer said; then the new key is at the quota.
    await rt.publisher.publish(
      newEvent('usage.incremented', { keyHash: String(first.meteredAs), metric: 'queries', amount: 1, period: currentPeriod() }),
    );
    await eventually(
      'the quota refusal for the new key',
      async () => ((await verdict(newKey)) === 'USAGE_EXCEEDED' ? true : undefined),
      2000,
    );
    expect((await usageOf(newKey)).usage.queries).to.equal(100);
    const gate = await fetch(`${premium.url}/premium`, { headers: { 'x-api-key': newKey } });
    expect(gate.status).to.equal(403);
    expect(((await gate.json()) as { code: string }).code).to.equal('USAGE_EXCEEDED');
  });

  it('a replay of the keys projection equals the live one', async () => {
    const rt = platform.runtime;
    const collection = () => projectionCollection(rt.mongo.db, keysProjection.collection);
    const live = await (await collection()).find({}).sort({ _id: 1 }).toArray();
    expect(live.length).to.be.greaterThan(0);
    await replayWith(rt, keysProjection as never);
    expect(await (await collection()).find({}).sort({ _id: 1 }).toArray()).to.deep.equal(live);
  });
});
