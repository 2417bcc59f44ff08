import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { expect } from 'chai';
import express from 'express';
import { freePort } from '../../deploy/local/processes.ts';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { projectionCollection } from '../../events/collections.ts';
import { newEvent } from '../../events/envelope.ts';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { accountsService } from '../../services/accounts/accounts.service.ts';
import type { SubscriptionCreated } from '../../services/billing/events.ts';
import type { Tier } from '../../services/kernel/tiers.ts';
import { keyGate } from '../../services/keys/gate.ts';
import { hashKey } from '../../services/keys/key-format.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { RemoteValidator } from '../../services/keys/remote-validator.ts';
import { mailerService } from '../../services/mailer/mailer.service.ts';
import type { TeamMemberInvited } from '../../services/teams/events.ts';
import { encryptInvitationToken, invitationTokenHash, newInvitationToken } from '../../services/teams/invitation-token.ts';
import { workspacesProjection } from '../../services/teams/workspaces.projection.ts';
import { subscriptionCreated } from '../support/subscriptions.ts';
import { useContractCheck } from '../support/contract-check.ts';
import { eventually, testEnv, testLogger } from '../support/env.ts';
import { keysMailedTo, mailTo } from '../support/mailpit.ts';
import { replayWith } from '../support/replay.ts';
import { postJson } from '../support/http.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';

const CONSOLE = 'https://console.svc.test';
const KEY_ENCRYPTION_KEY = 'cd'.repeat(32);

interface Person {
  email: string;
  password: string;
  userId: string;
  token: string;
}

/**
 * The team workspace end to end on real Kafka, FerretDB and Mailpit: an owner invites by e-mail, the
 * invitee accepts with the mailed token and gets a key of their own under the team's subscription,
 * whose uses count against the team's one quota through a real premium gate; roles hold; removing a
 * member stops their key within a second; one team sees nothing of another; the audit log shows the
 * invitation, and a replay of the workspaces projection equals the live one.
 */
describe('team workspace: invitations, roles, member keys (e2e)', function () {
  this.timeout(120_000);
  let stack: StackEnv;
  let platform: RunningPlatform;
  let keys: string;
  let accounts: string;
  let premium: Server;
  let premiumUrl: string;
  let owner: Person & { subscriptionId: string; apiKey: string };

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
        KEY_ENCRYPTION_KEY,
        CONSOLE_PUBLIC_URL: CONSOLE,
      }),
      testLogger(),
    );
    keys = `http://127.0.0.1:${ports.keys}`;
    accounts = `http://127.0.0.1:${ports.accounts}`;
    // A premium server of the shape every one has: the gate in front, validating over HTTP.
    const app = express();
    app.use(
      keyGate({
        validator: new RemoteValidator(keys),
        pricingUrl: 'https://svc.test/pricing',
        publisher: platform.runtime.publisher,
      }),
    );
    app.get('/premium', (_req, res) => {
      res.json({ ok: true });
    });
    const port = await freePort();
    premium = app.listen(port, '127.0.0.1');
    await new Promise((resolve) => premium.once('listening', resolve));
    premiumUrl = `http://127.0.0.1:${port}/premium`;
    owner = await subscriber('team');
  });

  after(async () => {
    premium?.close();
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
  });

  useContractCheck();

  const post = postJson;
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
  const team = (p: Person, subscriptionId = owner.subscriptionId) =>
    call('GET', `${keys}/team?subscriptionId=${subscriptionId}`, bearer(p));

  async function person(prefix: string): Promise<Person> {
    const email = `${prefix}-${randomUUID().slice(0, 8)}@example.test`;
    const password = `pw-${randomUUID()}`;
    const signup = await post(`${accounts}/auth/signup`, { email, password, name: prefix });
    expect(signup.status, signup.text).to.equal(201);
    const login = await post(`${accounts}/auth/login`, { email, password });
    expect(login.status, login.text).to.equal(200);
    return { email, password, userId: (signup.body.user as { id: string }).id, token: login.body.token as string };
  }

  async function subscriber(tier: Tier) {
    const p = await person(`owner-${tier}`);
    const subscriptionId = `sub-${randomUUID()}`;
    const created: SubscriptionCreated = subscriptionCreated({ subscriptionId, userId: p.userId, email: p.email, tier });
    await platform.runtime.publisher.publishOrdered([created]);
    const [apiKey] = await mailedKeys(p.email, 1);
    return { ...p, subscriptionId, apiKey: apiKey! };
  }

  const mailedKeys = (address: string, n: number) =>
    eventually(`key e-mail #${n} to ${address}`, async () => {
      const found = await keysMailedTo(stack.MAILPIT_URL, address);
      return found.length >= n ? found : undefined;
    });

  /** Invites, and reads the token from the link in the e-mail, as the invitee's browser would. */
  async function invite(by: Person, email: string, role: 'admin' | 'member' = 'member', subscriptionId = owner.subscriptionId) {
    const invited = await post(`${keys}/team/invitations`, { subscriptionId, email, role }, bearer(by));
    expect(invited.status, invited.text).to.equal(201);
    const mail = await eventually(`the invitation to ${email}`, async () =>
      (await mailTo(stack.MAILPIT_URL, email)).find((m) => m.MessageID.includes(invited.body.invitationId as string)),
    );
    const link = /https:\/\/console\.svc\.test\/team\/join\?token=([A-Za-z0-9_-]+)/.exec(mail.Text);
    expect(link, mail.Text).to.not.equal(null);
    return { invitationId: invited.body.invitationId as string, token: link![1]!, mail };
  }

  async function join(p: Person, role: 'admin' | 'member' = 'member') {
    const { token } = await invite(owner, p.email, role);
    const accepted = await post(`${keys}/team/invitations/accept`, { token }, bearer(p));
    expect(accepted.status, accepted.text).to.equal(200);
    const [apiKey] = await mailedKeys(p.email, 1);
    return apiKey!;
  }

  const validate = (apiKey: string) => post(`${keys}/validate`, { apiKey });
  const usage = (apiKey: string) => call('GET', `${keys}/usage`, { authorization: `Bearer ${apiKey}` });

  it('invites by e-mail; the invitee accepts with the mailed token, gets a key of their own and shares the team quota', async () => {
    const ana = await person('ana');
    const { token, mail } = await invite(owner, ana.email);
    expect(mail.Subject).to.equal('You are invited to a team on svc');

    // The token answers only the invited address's account, and only once.
    const stranger = await person('stranger');
    const wrong = await post(`${keys}/team/invitations/accept`, { token }, bearer(stranger));
    expect(wrong.status, wrong.text).to.equal(404);
    expect((await team(stranger)).status).to.equal(404);

    const accepted = await post(`${keys}/team/invitations/accept`, { token }, bearer(ana));
    expect(accepted.status, accepted.text).to.equal(200);
    expect(accepted.body).to.include({ subscriptionId: owner.subscriptionId, role: 'member' });
    const [anaKey] = await mailedKeys(ana.email, 1);
    // Compared by hash: a failing assertion prints its operands, and keys never appear in test output.
    expect(hashKey(anaKey!)).to.not.equal(hashKey(owner.apiKey));
    const keyMail = (await mailTo(stack.MAILPIT_URL, ana.email)).find((m) => /API key/.test(m.Subject));
    expect(keyMail?.Subject).to.equal('Your svc API key for your team');

    const asMember = await validate(anaKey!);
    expect(asMember.body).to.include({ valid: true, tier: 'team', meteredAs: hashKey(owner.apiKey) });
    expect(asMember.body.customerId).to.equal((await validate(owner.apiKey)).body.customerId);

    // One quota: a use through a premium gate with Ana's key is counted on the team's, and both keys see it.
    const before = (await usage(owner.apiKey)).body.usage as { queries: number };
    const served = await fetch(premiumUrl, { headers: { 'x-api-key': anaKey! } });
    expect(served.status).to.equal(200);
    for (const k of [owner.apiKey, anaKey!]) {
      await eventually('the use on the team quota', async () => {
        const now = (await usage(k)).body.usage as { queries: number };
        return now.queries === before.queries + 1 ? true : undefined;
      });
    }
    // GET /usage tells Ana's key by its own last four.
    expect(((await usage(anaKey!)).body.key as { last4: string }).last4).to.equal(anaKey!.slice(-4));

    const view = await team(ana);
    expect(view.status, view.text).to.equal(200);
    expect(view.body.role).to.equal('member');
    const members = view.body.members as { userId: string; role: string; key: { last4: string } | null }[];
    const anaRow = members.find((m) => m.userId === ana.userId);
    expect(anaRow?.role).to.equal('member');
    expect(anaRow?.key?.last4).to.equal(anaKey!.slice(-4));
    expect(view.body.invitations, 'a member does not see the guest list').to.deep.equal([]);

    const listed = await call('GET', `${keys}/teams`, bearer(ana));
    expect(listed.body.workspaces).to.deep.equal([{ subscriptionId: owner.subscriptionId, role: 'member' }]);
    // The token was used: a second accept by someone else is refused, a repeat by Ana changes nothing.
    expect((await post(`${keys}/team/invitations/accept`, { token }, bearer(ana))).status).to.equal(200);
    expect((await mailedKeys(ana.email, 1)).length).to.equal(1);
  });

  it('holds roles: members read, admins invite members, only the owner makes admins and removes them', async () => {
    const bo = await person('bo');
    await join(bo, 'admin');
    const cy = await person('cy');
    const memberInvite = await post(`${keys}/team/invitations`, { subscriptionId: owner.subscriptionId, email: cy.email }, bearer(bo));
    expect(memberInvite.status, memberInvite.text).to.equal(201);
    const adminInvite = await post(
      `${keys}/team/invitations`,
      { subscriptionId: owner.subscriptionId, email: cy.email, role: 'admin' },
      bearer(bo),
    );
    expect(adminInvite.status).to.equal(403);
    const { token } = await invite(bo, cy.email);
    expect((await post(`${keys}/team/invitations/accept`, { token }, bearer(cy))).status).to.equal(200);

    // A member cannot invite, change roles or remove anyone; an admin cannot remove an admin.
    expect(
      (await post(`${keys}/team/invitations`, { subscriptionId: owner.subscriptionId, email: 'x@example.test' }, bearer(cy))).status,
    ).to.equal(403);
    expect(
      (await call('PUT', `${keys}/team/members/${bo.userId}/role`, bearer(bo), { subscriptionId: owner.subscriptionId, role: 'member' }))
        .status,
    ).to.equal(403);
    expect((await call('DELETE', `${keys}/team/members/${bo.userId}?subscriptionId=${owner.subscriptionId}`, bearer(cy))).status).to.equal(
      403,
    );
    const promoted = await call('PUT', `${keys}/team/members/${cy.userId}/role`, bearer(owner), {
      subscriptionId: owner.subscriptionId,
      role: 'admin',
    });
    expect(promoted.status, promoted.text).to.equal(200);
    expect((await call('DELETE', `${keys}/team/members/${cy.userId}?subscriptionId=${owner.subscriptionId}`, bearer(bo))).status).to.equal(
      403,
    );

    // The guest list is the managers': a pending invitation shows to the admin, and can be withdrawn.
    const pending = await invite(bo, `dee-${randomUUID().slice(0, 8)}@example.test`);
    const seen = (await team(bo)).body.invitations as { invitationId: string }[];
    expect(seen.map((i) => i.invitationId)).to.include(pending.invitationId);
    const withdrawn = await call(
      'DELETE',
      `${keys}/team/invitations/${pending.invitationId}?subscriptionId=${owner.subscriptionId}`,
      bearer(bo),
    );
    expect(withdrawn.status, withdrawn.text).to.equal(204);
    expect(((await team(bo)).body.invitations as { invitationId: string }[]).map((i) => i.invitationId)).to.not.include(
      pending.invitationId,
    );
  });

  it("removing a member stops their key within a second, and the owner's keeps working", async () => {
    const eve = await person('eve');
    const eveKey = await join(eve);
    expect((await validate(eveKey)).body.valid).to.equal(true);
    const removed = await call('DELETE', `${keys}/team/members/${eve.userId}?subscriptionId=${owner.subscriptionId}`, bearer(owner));
    expect(removed.status, removed.text).to.equal(204);
    await eventually(
      "the removed member's key refused",
      async () => {
        const v = await validate(eveKey);
        return v.body.valid === false ? v.body : undefined;
      },
      1000,
    );
    expect((await fetch(premiumUrl, { headers: { 'x-api-key': eveKey } })).status).to.equal(403);
    expect((await validate(owner.apiKey)).body.valid).to.equal(true);
    expect((await team(eve)).status, 'she is no longer in it').to.equal(404);
    expect((await call('GET', `${keys}/teams`, bearer(eve))).body.workspaces).to.deep.equal([]);
  });

  it('an invitation past its expiry is refused with 410 and lets no one in', async () => {
    const hal = await person('hal');
    // An invitation that expired a minute ago, as the route would have written it then: no waiting.
    const token = newInvitationToken();
    const expired: TeamMemberInvited = newEvent('team.member-invited', {
      subscriptionId: owner.subscriptionId,
      invitationId: randomUUID(),
      email: hal.email,
      role: 'member',
      tokenHash: invitationTokenHash(token),
      encryptedToken: encryptInvitationToken(token, Buffer.from(KEY_ENCRYPTION_KEY, 'hex'), owner.subscriptionId),
      expiresAt: new Date(Date.now() - 60_000),
      invitedBy: owner.userId,
    });
    await platform.runtime.publisher.publishOrdered([expired]);
    const refused = await eventually('the expired invitation in the workspace', async () => {
      const answer = await post(`${keys}/team/invitations/accept`, { token }, bearer(hal));
      return answer.status === 404 ? undefined : answer;
    });
    expect(refused.status, refused.text).to.equal(410);
    expect(refused.body).to.include({ code: 'EXPIRED' });
    expect((await team(hal)).status).to.equal(404);
    // Not among the pending ones the owner sees either.
    const invitations = (await team(owner)).body.invitations as { email: string }[];
    expect(invitations.map((i) => i.email)).to.not.include(hal.email);
  });

  it('one team sees nothing of another; a pro subscription has no workspace; no token, 401', async () => {
    const other = await subscriber('team');
    expect((await team(other)).status, "another team's owner").to.equal(404);
    expect(
      (await post(`${keys}/team/invitations`, { subscriptionId: owner.subscriptionId, email: 'z@example.test' }, bearer(other))).status,
    ).to.equal(404);
    expect(
      (await call('DELETE', `${keys}/team/members/${owner.userId}?subscriptionId=${owner.subscriptionId}`, bearer(other))).status,
    ).to.equal(404);
    const mine = await team(other, other.subscriptionId);
    expect(mine.status, mine.text).to.equal(200);
    expect(mine.body.members).to.deep.equal([]);
    const pro = await subscriber('pro');
    const refused = await team(pro, pro.subscriptionId);
    expect(refused.status).to.equal(403);
    expect(refused.body.error).to.equal('a team workspace is part of the team tier');
    expect((await call('GET', `${keys}/team?subscriptionId=${owner.subscriptionId}`, {})).status).to.equal(401);
    const bad = await post(`${keys}/team/invitations`, { subscriptionId: owner.subscriptionId, email: 'not-an-address' }, bearer(owner));
    expect(bad.status).to.equal(400);
    expect(bad.body.error).to.match(/email/);
  });

  it('the audit log shows the invitation within a second to the owner, and a member the membership without it; a replay of the workspaces equals the live one', async () => {
    const fay = await person('fay');
    const invited = await post(`${keys}/team/invitations`, { subscriptionId: owner.subscriptionId, email: fay.email }, bearer(owner));
    expect(invited.status).to.equal(201);
    const entry = await eventually(
      'the invitation in the audit log',
      async () => {
        const page = await call('GET', `${keys}/audit?action=team.member-invited`, { 'x-api-key': owner.apiKey });
        return (page.body.entries as { target: string; actor: string; details: Record<string, unknown> }[]).find(
          (e) => e.target === `invitation ${fay.email}`,
        );
      },
      1000,
    );
    expect(entry.actor).to.equal(`account:${owner.userId}`);
    expect(JSON.stringify(entry)).to.not.match(/token/i);
    // A member reads the team's log with their own account token: who joined, left and holds which
    // role, but not the guest list (invitations are the owner's and admins', as GET /team shows them).
    const gus = await person('gus');
    await join(gus);
    const asMember = await call('GET', `${keys}/audit?subscriptionId=${owner.subscriptionId}&action=team.`, bearer(gus));
    expect(asMember.status, asMember.text).to.equal(200);
    const actions = (asMember.body.entries as { action: string }[]).map((e) => e.action);
    expect(actions).to.include.members(['team.member-joined', 'team.member-removed', 'team.member-role-changed']);
    expect(actions).not.to.include('team.member-invited');
    expect(asMember.text).not.to.include(fay.email);

    const rt = platform.runtime;
    const collection = () => projectionCollection(rt.mongo.db, workspacesProjection.collection);
    const live = await (await collection()).find({}).sort({ _id: 1 }).toArray();
    expect(live.length).to.be.greaterThan(0);
    await replayWith(rt, workspacesProjection as never);
    expect(await (await collection()).find({}).sort({ _id: 1 }).toArray()).to.deep.equal(live);
  });
});
