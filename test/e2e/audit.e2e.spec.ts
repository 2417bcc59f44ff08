import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { freePort } from '../../deploy/local/processes.ts';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { projectionCollection } from '../../events/collections.ts';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { accountsService } from '../../services/accounts/accounts.service.ts';
import { auditProjection } from '../../services/audit/audit.projection.ts';
import type { SubscriptionCreated } from '../../services/billing/events.ts';
import type { Tier } from '../../services/kernel/tiers.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { mailerService } from '../../services/mailer/mailer.service.ts';
import { subscriptionCreated } from '../support/subscriptions.ts';
import { useContractCheck } from '../support/contract-check.ts';
import { eventually, testEnv, testLogger } from '../support/env.ts';
import { keysMailedTo } from '../support/mailpit.ts';
import { replayWith } from '../support/replay.ts';
import { postJson } from '../support/http.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';

const KEY = /svc_[A-Za-z0-9]{33}/g;

interface Entry {
  entryId: string;
  at: string;
  action: string;
  actor: string;
  target: string | null;
  subscriptionId: string | null;
  userId: string | null;
  details: Record<string, unknown>;
}
interface Page {
  entries: Entry[];
  nextCursor: string | null;
  retentionDays: number;
}

/**
 * The team's audit log end to end: a log-in, a key rotation and a refused key each show in GET /audit
 * within a second; filters and cursor paging; one team never reads another's; a replay of the
 * projection rebuilds the same entries. Real Kafka, FerretDB and Mailpit.
 */
describe('audit log: GET /audit for a team (e2e)', function () {
  this.timeout(120_000);
  let stack: StackEnv;
  let platform: RunningPlatform;
  let keys: string;
  let accounts: string;
  let team: { subscriptionId: string; apiKey: string; email: string; userId: string; token: string };

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    stack = await useStack();
    if (!stack.MAILPIT_URL) this.skip();
    const ports = { accounts: await freePort(), keys: await freePort() };
    platform = await startServices(
      [accountsService, keysService, mailerService],
      testEnv(stack, {
        ACCOUNTS_PORT: String(ports.accounts),
        KEYS_PORT: String(ports.keys),
        WEBHOOK_SECRET: 'ab'.repeat(32),
        KEY_ENCRYPTION_KEY: 'cd'.repeat(32),
      }),
      testLogger(),
    );
    keys = `http://127.0.0.1:${ports.keys}`;
    accounts = `http://127.0.0.1:${ports.accounts}`;
    team = await signUpAndSubscribe('team');
  });

  after(async () => {
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
  });

  useContractCheck();

  const post = postJson;
  const audit = async (query: Record<string, string>, headers: Record<string, string>) => {
    const res = await fetch(`${keys}/audit?${new URLSearchParams(query)}`, { headers });
    const text = await res.text();
    return { status: res.status, text, body: JSON.parse(text) as Page & { code?: string; error?: string } };
  };
  const asTeam = () => ({ 'x-api-key': team.apiKey });
  const mailedKeys = async (address: string, n: number) =>
    eventually(`key e-mail #${n} to ${address}`, async () => {
      const found = await keysMailedTo(stack.MAILPIT_URL, address);
      return found.length >= n ? found : undefined;
    });
  /** Within a second of the act, as the issue asks: polled, never slept. */
  const shows = (what: string, query: Record<string, string>, match: (e: Entry) => boolean) =>
    eventually(
      what,
      async () => {
        const page = await audit(query, asTeam());
        return page.body.entries?.find(match);
      },
      1000,
    );

  async function signUpAndSubscribe(tier: Tier) {
    const email = `audit-${randomUUID().slice(0, 8)}@example.test`;
    const password = `pw-${randomUUID()}`;
    const signup = await post(`${accounts}/auth/signup`, { email, password, name: 'Audit Owner' });
    expect(signup.status, signup.text).to.equal(201);
    const userId = (signup.body.user as { id: string }).id;
    const subscriptionId = `sub-${randomUUID()}`;
    const created: SubscriptionCreated = subscriptionCreated({ subscriptionId, userId, email, tier });
    await platform.runtime.publisher.publishOrdered([created]);
    const [apiKey] = await mailedKeys(email, 1);
    const login = await post(`${accounts}/auth/login`, { email, password });
    expect(login.status, login.text).to.equal(200);
    return { subscriptionId, apiKey: apiKey!, email, userId, token: login.body.token as string, password };
  }

  it('shows a log-in within a second, with who and how, and nothing of the password', async () => {
    const login = await post(`${accounts}/auth/login`, { email: team.email, password: 'wrong-password-1' });
    expect(login.status).to.equal(401);
    const logins = await shows('the log-ins', { action: 'account.logged-in' }, (e) => e.userId === team.userId);
    expect(logins).to.include({ actor: `account:${team.userId}`, action: 'account.logged-in' });
    expect(logins.details).to.deep.equal({ method: 'password' });
    const page = await audit({ action: 'account.' }, asTeam());
    // The failed attempt made no entry; sign-up and the successful log-in did.
    expect(page.body.entries.map((e) => e.action).sort()).to.deep.equal(['account.logged-in', 'account.registered']);
    expect(JSON.stringify(page.body)).not.to.include('wrong-password-1');
  });

  it('shows a key rotation within a second, and a refused key within a second', async () => {
    const rotated = await post(
      `${keys}/keys/rotate`,
      { subscriptionId: team.subscriptionId, graceSeconds: 0 },
      { authorization: `Bearer ${team.token}` },
    );
    expect(rotated.status, rotated.text).to.equal(200);
    const [, newKey] = await mailedKeys(team.email, 2);
    team.apiKey = newKey!;
    const rotation = await shows('the rotation', { action: 'key.' }, (e) => e.action === 'key.rotated');
    expect(rotation).to.deep.include({ actor: 'owner', target: `key …${newKey!.slice(-4)}`, subscriptionId: team.subscriptionId });
    expect(rotation.details).to.include({ replacesLast4: rotated.body.replacedLast4, previousValidUntil: null, generation: 1 });

    // One request a minute for this key: the second check is refused, and that refusal is audited.
    const limited = await post(`${keys}/keys/limits`, { requestsPerMinute: 1 }, asTeam());
    expect(limited.status, limited.text).to.equal(200);
    await eventually('the limit in force', async () => {
      const v = await post(`${keys}/validate`, { apiKey: team.apiKey });
      return v.body.valid === false && v.body.code === 'RATE_LIMITED' ? true : undefined;
    });
    const refusal = await shows('the refused check', { action: 'key.check-refused' }, () => true);
    expect(refusal.details).to.include({ code: 'RATE_LIMITED' });
    expect(refusal.subscriptionId).to.equal(team.subscriptionId);
    expect(JSON.stringify(refusal)).not.to.match(KEY);
  });

  it('filters by actor, action and time, and pages with a cursor through exactly the unpaged list', async () => {
    const lifted = await post(
      `${keys}/keys/limits`,
      { subscriptionId: team.subscriptionId, requestsPerMinute: null },
      { authorization: `Bearer ${team.token}` },
    );
    expect(lifted.status, lifted.text).to.equal(200);
    // Its entry lands through the log: wait for it, or it may land between the two listings below
    // (CI on a loaded machine saw the paged walk find one entry more than the unpaged list).
    await shows('the limit lifted', { action: 'key.' }, (e) => e.action === 'key.limits-set' && e.details.requestsPerMinute === null);
    const headers = { authorization: `Bearer ${team.token}` };
    const all = await audit({ subscriptionId: team.subscriptionId, limit: '200' }, headers);
    expect(all.status, all.text).to.equal(200);
    expect(all.body.retentionDays).to.equal(365);
    expect(all.body.nextCursor).to.equal(null);
    const ats = all.body.entries.map((e) => e.at);
    expect(ats).to.deep.equal([...ats].sort().reverse());
    expect(new Set(all.body.entries.map((e) => e.action))).to.include.members([
      'subscription.created',
      'key.issued',
      'key.rotated',
      'key.limits-set',
      'key.check-refused',
      'account.logged-in',
    ]);

    const paged: Entry[] = [];
    let cursor: string | null = null;
    do {
      const page = await audit({ subscriptionId: team.subscriptionId, limit: '2', ...(cursor ? { cursor } : {}) }, headers);
      expect(page.status, page.text).to.equal(200);
      expect(page.body.entries.length).to.be.at.most(2);
      paged.push(...page.body.entries);
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(paged.map((e) => e.entryId)).to.deep.equal(all.body.entries.map((e) => e.entryId));

    const byActor = await audit({ subscriptionId: team.subscriptionId, actor: 'owner' }, headers);
    expect(byActor.body.entries.length).to.be.greaterThan(0);
    expect(byActor.body.entries.every((e) => e.actor === 'owner')).to.equal(true);
    const future = await audit({ subscriptionId: team.subscriptionId, from: new Date(Date.now() + 60_000).toISOString() }, headers);
    expect(future.body.entries).to.deep.equal([]);

    expect((await audit({ subscriptionId: team.subscriptionId, cursor: 'bm90LWEtY3Vyc29y' }, headers)).status).to.equal(400);
    expect((await audit({ subscriptionId: team.subscriptionId, action: 'DROP TABLE' }, headers)).status).to.equal(400);
    expect((await audit({ limit: '5' }, headers)).status).to.equal(400);
  });

  it("never shows one team another's entries; a tier without an audit log is refused; no credentials, 401", async () => {
    const other = await signUpAndSubscribe('team');
    const theirs = await audit({ limit: '200' }, { 'x-api-key': other.apiKey });
    expect(theirs.status, theirs.text).to.equal(200);
    const ids = new Set([team.subscriptionId, team.userId]);
    for (const e of theirs.body.entries) {
      expect(ids.has(e.subscriptionId ?? '') || ids.has(e.userId ?? ''), JSON.stringify(e)).to.equal(false);
    }
    // The other owner's token cannot name the first team's subscription: it reads as absent.
    const foreign = await audit({ subscriptionId: team.subscriptionId }, { authorization: `Bearer ${other.token}` });
    expect(foreign.status).to.equal(404);

    const pro = await signUpAndSubscribe('pro');
    const refused = await audit({}, { 'x-api-key': pro.apiKey });
    expect(refused.status).to.equal(403);
    expect(refused.body).to.include({ code: 'FORBIDDEN', error: 'the audit log is part of the team tier' });
    expect((await audit({}, {})).status).to.equal(401);
  });

  it('a replay of the audit projection rebuilds the same entries', async function () {
    this.timeout(120_000);
    const rt = platform.runtime;
    const collection = () => projectionCollection(rt.mongo.db, auditProjection.collection);
    const ours = { $or: [{ subscriptionId: team.subscriptionId }, { userId: team.userId }] };
    const before = await (await collection()).find(ours).sort({ _id: 1 }).toArray();
    expect(before.length).to.be.greaterThan(5);
    await replayWith(rt, auditProjection as never);
    expect(await (await collection()).find(ours).sort({ _id: 1 }).toArray()).to.deep.equal(before);
  });
});
