import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect } from 'chai';
import { freePort } from '../../deploy/local/processes.ts';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { newEvent } from '../../events/envelope.ts';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { accountsService } from '../../services/accounts/accounts.service.ts';
import type { SubscriptionCreated } from '../../services/billing/events.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { mailerService } from '../../services/mailer/mailer.service.ts';
import type { TeamMemberJoined, TeamSsoConfigured } from '../../services/teams/events.ts';
import { ragService } from '../../services/vision-rag/vision-rag.service.ts';
import { subscriptionCreated } from '../support/subscriptions.ts';
import { useContractCheck } from '../support/contract-check.ts';
import { eventually, testLogger } from '../support/env.ts';
import { keysMailedTo, mailTo } from '../support/mailpit.ts';
import { postJson } from '../support/http.ts';
import { retrievalEnv, retrievalPorts } from '../support/retrieval.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';

const SHARED_SECRET = 'fb'.repeat(32);
const CONSOLE = 'https://console.svc.test';
const ISSUER = 'https://idp.accountability.example';

interface Person {
  email: string;
  password: string;
  userId: string;
  token: string;
}
interface Entry {
  entryId: string;
  action: string;
  actor: string;
  target: string | null;
  subscriptionId: string | null;
  userId: string | null;
  customerId: string | null;
  details: Record<string, unknown>;
}
interface Page {
  entries: Entry[];
  nextCursor: string | null;
}

/**
 * Issue 43, items 3, 5 and 6, end to end on real Kafka, FerretDB and Mailpit with the accounts, keys,
 * mailer and vision RAG services: what each role reads in GET /audit (a member neither the guest
 * list, nor single sign-on, nor the owner's own log-ins, nor another subscription's entries); removal
 * withdraws the invitations that came with the membership; a member key's acts are the member's.
 */
describe('team accountability: who reads the log, what removal ends, who is blamed (e2e)', function () {
  this.timeout(180_000);
  let stack: StackEnv;
  let platform: RunningPlatform;
  let dir: string;
  let keys: string;
  let accounts: string;
  let rag: string;
  let owner: Person & { subscriptionId: string; apiKey: string; customerId: string; otherSubscriptionId: string };

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    stack = await useStack();
    if (!stack.MAILPIT_URL) this.skip();
    dir = mkdtempSync(join(resolve('.data'), `test-${process.pid}-accountability-`));
    writeFileSync(join(dir, 'readme.md'), '# A project\n\nSomething to index.\n');
    const ports = await retrievalPorts();
    const accountsPort = await freePort();
    platform = await startServices(
      [accountsService, keysService, mailerService, ragService],
      retrievalEnv(
        stack,
        { ports, dir, workspace: dir, sharedSecret: SHARED_SECRET },
        {
          ACCOUNTS_PORT: String(accountsPort),
          KEY_ENCRYPTION_KEY: 'cd'.repeat(32),
          CONSOLE_PUBLIC_URL: CONSOLE,
          RAG_PUBLIC_URL: `http://127.0.0.1:${ports.rag}`,
        },
      ),
      testLogger(),
    );
    keys = `http://127.0.0.1:${ports.keys}`;
    accounts = `http://127.0.0.1:${accountsPort}`;
    rag = `http://127.0.0.1:${ports.rag}`;

    const p = await person('owner');
    const subscriptionId = `sub-${randomUUID()}`;
    const created = subscriptionCreated({ subscriptionId, userId: p.userId, email: p.email, tier: 'team' });
    // The owner's other subscription, under the same customer: none of it belongs in the team's log.
    const otherSubscriptionId = `sub-other-${randomUUID()}`;
    const base = subscriptionCreated({ subscriptionId: otherSubscriptionId, userId: p.userId, email: p.email, tier: 'pro' });
    const other: SubscriptionCreated = { ...base, data: { ...base.data, customerId: created.data.customerId } };
    await platform.runtime.publisher.publishOrdered([created]);
    const [apiKey] = await mailedKeys(p.email, 1);
    await platform.runtime.publisher.publishOrdered([other]);
    await mailedKeys(p.email, 2);
    owner = { ...p, subscriptionId, apiKey: apiKey!, customerId: created.data.customerId, otherSubscriptionId };
  });

  after(async () => {
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
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
    return { email, password, userId: (signup.body.user as { id: string }).id, token: login.body.token as string };
  }

  async function invite(by: Person, email: string, role: 'admin' | 'member' = 'member') {
    const invited = await post(`${keys}/team/invitations`, { subscriptionId: owner.subscriptionId, email, role }, bearer(by));
    expect(invited.status, invited.text).to.equal(201);
    const mail = await eventually(`the invitation to ${email}`, async () =>
      (await mailTo(stack.MAILPIT_URL, email)).find((m) => m.MessageID.includes(invited.body.invitationId as string)),
    );
    const link = /https:\/\/console\.svc\.test\/team\/join\?token=([A-Za-z0-9_-]+)/.exec(mail.Text);
    expect(link, mail.Text).to.not.equal(null);
    return { invitationId: invited.body.invitationId as string, token: link![1]! };
  }

  const accept = (p: Person, token: string) => post(`${keys}/team/invitations/accept`, { token }, bearer(p));

  async function joinTeam(p: Person, role: 'admin' | 'member') {
    const { token } = await invite(owner, p.email, role);
    const accepted = await accept(p, token);
    expect(accepted.status, accepted.text).to.equal(200);
    const [apiKey] = await mailedKeys(p.email, 1);
    return apiKey!;
  }

  const audit = async (headers: Record<string, string>, query: Record<string, string> = {}) => {
    const res = await call('GET', `${keys}/audit?${new URLSearchParams({ limit: '200', ...query })}`, headers);
    expect(res.status, res.text).to.equal(200);
    return { text: res.text, page: res.body as unknown as Page };
  };
  const asToken = (p: Person) => audit(bearer(p), { subscriptionId: owner.subscriptionId });

  describe('GET /audit reads by role (item 3)', () => {
    let admin: Person;
    let member: Person & { apiKey: string };
    let guest: string;

    before(async () => {
      admin = await person('admin');
      await joinTeam(admin, 'admin');
      const m = await person('member');
      member = { ...m, apiKey: await joinTeam(m, 'member') };
      guest = `guest-${randomUUID().slice(0, 8)}@example.test`;
      await invite(admin, guest);
      const sso: TeamSsoConfigured = newEvent('team.sso-configured', {
        subscriptionId: owner.subscriptionId,
        issuer: ISSUER,
        clientId: 'client-accountability',
        encryptedClientSecret: 'sealed',
        domains: ['accountability.example'],
        configuredBy: owner.userId,
      });
      await platform.runtime.publisher.publishOrdered([sso]);
      const changed = await post(
        `${accounts}/auth/password`,
        { currentPassword: owner.password, newPassword: `${owner.password}-2` },
        bearer(owner),
      );
      expect(changed.status, changed.text).to.equal(200);
      owner.token = changed.body.token as string;
      // Everything is in the owner's log before anyone reads theirs.
      await eventually('the whole story in the log', async () => {
        const { page } = await asToken(owner);
        const actions = new Set(page.entries.map((e) => e.action));
        return ['team.sso-configured', 'account.password-changed', 'team.member-invited'].every((a) => actions.has(a)) &&
          page.entries.filter((e) => e.action === 'key.issued' && e.details.member).length === 2
          ? true
          : undefined;
      });
    });

    it('a member reads the team and their own key, and none of the invitations, single sign-on, the owner’s account or billing', async () => {
      for (const read of [() => asToken(member), () => audit({ 'x-api-key': member.apiKey })]) {
        const { text, page } = await read();
        expect(text).not.to.include(guest);
        expect(text).not.to.include(ISSUER);
        expect(text).not.to.include('client-accountability');
        expect(text).not.to.include(owner.otherSubscriptionId);
        expect(text).not.to.include(owner.email);
        for (const e of page.entries) {
          expect(e.subscriptionId, JSON.stringify(e)).to.equal(owner.subscriptionId);
          expect(e.action, JSON.stringify(e)).not.to.match(/^(team\.member-invited|team\.invitation-|team\.sso-|account\.|subscription\.)/);
          if (e.action.startsWith('key.')) expect(e.details.member, JSON.stringify(e)).to.equal(member.userId);
          // Who joined, by account: not the address they were invited at.
          if (e.action === 'team.member-joined') expect(e.target).to.equal(`member ${String(e.details.userId)}`);
        }
        const actions = page.entries.map((e) => e.action);
        expect(actions.filter((a) => a === 'team.member-joined')).to.have.length(2);
        expect(actions.filter((a) => a === 'key.issued')).to.have.length(1);
      }
      // Paged one entry at a time, the member reads exactly the unpaged list.
      const all = (await asToken(member)).page.entries.map((e) => e.entryId);
      const paged: string[] = [];
      let cursor: string | null = null;
      do {
        const q: Record<string, string> = { subscriptionId: owner.subscriptionId, limit: '1', ...(cursor ? { cursor } : {}) };
        const { page } = await audit(bearer(member), q);
        paged.push(...page.entries.map((e) => e.entryId));
        cursor = page.nextCursor;
      } while (cursor);
      expect(paged).to.deep.equal(all);
    });

    it('an admin reads the workspace, invitations and single sign-on included, but not the owner’s account or billing', async () => {
      const { text, page } = await asToken(admin);
      expect(text).to.include(guest);
      expect(text).to.include(ISSUER);
      expect(text).not.to.include(owner.otherSubscriptionId);
      const actions = new Set(page.entries.map((e) => e.action));
      expect(actions).to.include.members(['team.member-invited', 'team.sso-configured', 'team.member-joined', 'key.issued']);
      for (const e of page.entries) {
        expect(e.action, JSON.stringify(e)).not.to.match(/^(account\.|subscription\.)/);
        expect(e.userId, JSON.stringify(e)).not.to.equal(owner.userId);
      }
    });

    it('the owner reads all of the workspace and their own account, and nothing of their other subscription', async () => {
      for (const read of [() => asToken(owner), () => audit({ 'x-api-key': owner.apiKey })]) {
        const { text, page } = await read();
        const actions = new Set(page.entries.map((e) => e.action));
        expect(actions).to.include.members([
          'team.member-invited',
          'team.sso-configured',
          'account.password-changed',
          'account.logged-in',
          'subscription.created',
        ]);
        expect(text).not.to.include(owner.otherSubscriptionId);
        for (const e of page.entries) {
          expect([owner.subscriptionId, null], JSON.stringify(e)).to.include(e.subscriptionId);
        }
      }
      // The owner's other subscription's key was issued under the same customer: not in this log.
      const keysIssued = (await asToken(owner)).page.entries.filter((e) => e.action === 'key.issued' && !e.details.member);
      expect(keysIssued).to.have.length(1);
    });
  });

  describe('removal withdraws the invitations that came with the membership (item 5)', () => {
    it('a removed admin’s invitations and a removed member’s own are refused afterwards, and the log shows each withdrawal', async () => {
      const al = await person('al');
      await joinTeam(al, 'admin');
      // The removed admin's second account, invited by the admin before the removal.
      const alt = await person('alt');
      const fromAl = await invite(al, alt.email);
      // An invitation to an address whose person then joins another way (single sign-on), still pending.
      const zed = await person('zed');
      const toZed = await invite(owner, zed.email);
      const joined: TeamMemberJoined = newEvent('team.member-joined', {
        subscriptionId: owner.subscriptionId,
        membershipId: randomUUID(),
        userId: zed.userId,
        email: zed.email,
        role: 'member',
        via: 'sso',
        invitationId: null,
      });
      await platform.runtime.publisher.publishOrdered([joined]);
      await eventually('Zed in the workspace', async () => {
        const view = await call('GET', `${keys}/team?subscriptionId=${owner.subscriptionId}`, bearer(owner));
        return (view.body.members as { userId: string }[]).some((m) => m.userId === zed.userId) ? true : undefined;
      });

      for (const p of [al, zed]) {
        const removed = await call('DELETE', `${keys}/team/members/${p.userId}?subscriptionId=${owner.subscriptionId}`, bearer(owner));
        expect(removed.status, removed.text).to.equal(204);
      }

      const late = await accept(alt, fromAl.token);
      expect(late.status, late.text).to.equal(410);
      expect(late.body).to.include({ code: 'USED' });
      const back = await accept(zed, toZed.token);
      expect(back.status, back.text).to.equal(410);
      const view = await call('GET', `${keys}/team?subscriptionId=${owner.subscriptionId}`, bearer(owner));
      const members = (view.body.members as { userId: string }[]).map((m) => m.userId);
      expect(members).not.to.include.members([alt.userId]);
      expect(members).not.to.include(zed.userId);
      const pending = (view.body.invitations as { invitationId: string }[]).map((i) => i.invitationId);
      expect(pending).not.to.include.members([fromAl.invitationId, toZed.invitationId]);

      const withdrawn = await eventually(
        'both withdrawals in the log',
        async () => {
          const { page } = await asToken(owner);
          const revoked = page.entries.filter((e) => e.action === 'team.invitation-revoked');
          const ids = revoked.map((e) => e.target);
          return ids.includes(`invitation ${fromAl.invitationId}`) && ids.includes(`invitation ${toZed.invitationId}`)
            ? revoked
            : undefined;
        },
        3000,
      );
      for (const e of withdrawn.filter((x) => [fromAl.invitationId, toZed.invitationId].some((id) => x.target === `invitation ${id}`))) {
        expect(e.actor).to.equal(`account:${owner.userId}`);
      }
    });
  });

  describe('a member key’s acts are recorded as the member’s (item 6)', () => {
    it('setting up and deleting a collection and storing a note name the member and their key’s last four', async () => {
      const mo = await person('mo');
      const moKey = await joinTeam(mo, 'member');
      const last4 = moKey.slice(-4);
      const rq = (method: string, path: string, body?: unknown) => call(method, `${rag}${path}`, { 'x-api-key': moKey }, body);

      const setup = await rq('POST', '/api/rag/setup', { collectionName: 'mo-docs', projectPath: dir });
      expect(setup.status, setup.text).to.equal(200);
      const deleted = await rq('DELETE', '/api/rag/collections/mo-docs');
      expect(deleted.status, deleted.text).to.equal(200);
      const note = await rq('POST', '/api/memory/notes', { text: 'Releases go out on Tuesdays.', tags: ['process'] });
      expect(note.status, note.text).to.equal(201);
      expect(note.body.note).to.include({ author: `account:${mo.userId}`, authorKey: `…${last4}` });
      const listed = await rq('GET', '/api/memory/notes');
      expect((listed.body.notes as { author: string; authorKey: string | null }[])[0]).to.include({
        author: `account:${mo.userId}`,
        authorKey: `…${last4}`,
      });

      for (const reader of [owner, mo]) {
        const mine = await eventually(
          `the member's acts in the log, read by ${reader === owner ? 'the owner' : 'the member'}`,
          async () => {
            const { page } = await asToken(reader);
            const acts = page.entries.filter((e) => e.action.startsWith('rag.') && e.actor === `account:${mo.userId}`);
            const kinds = new Set(acts.map((e) => `${e.action} ${e.target}`));
            return kinds.has('rag.collection-configured collection mo-docs') &&
              kinds.has('rag.collection-deleted collection mo-docs') &&
              kinds.has('rag.index-requested collection .memory')
              ? acts
              : undefined;
          },
        );
        for (const e of mine) expect(e.details.key, JSON.stringify(e)).to.equal(`…${last4}`);
      }
      // The team's own key is named by its last four, not by the quota's hash.
      const ownerSetup = await call(
        'POST',
        `${rag}/api/rag/setup`,
        { 'x-api-key': owner.apiKey },
        { collectionName: 'team-docs', projectPath: dir },
      );
      expect(ownerSetup.status, ownerSetup.text).to.equal(200);
      await eventually('the team key’s setup in the log', async () => {
        const { page } = await asToken(owner);
        return page.entries.find(
          (e) =>
            e.action === 'rag.collection-configured' && e.target === 'collection team-docs' && e.actor === `key:…${owner.apiKey.slice(-4)}`,
        );
      });
    });
  });
});
