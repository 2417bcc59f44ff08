import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import jwt from 'jsonwebtoken';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { freePort } from '../../deploy/local/processes.ts';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { accountsService } from '../../services/accounts/accounts.service.ts';
import { REVOKED_TOKENS_COLLECTION } from '../../services/accounts/revoked-tokens.ts';
import { auditLog } from '../../services/audit/audit.projection.ts';
import { consoleService } from '../../services/console/console.service.ts';
import { csrfToken } from '../../services/console/session.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { useContractCheck } from '../support/contract-check.ts';
import { eventually, testEnv, testLogger } from '../support/env.ts';
import { postJson } from '../support/http.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';

const JWT_SECRET = 'e2e-logout-secret-0123456789abcdef-012345';

/**
 * Log-out ends a session for real: POST /auth/logout refuses the token that asked, POST
 * /auth/logout-all every token of the account, at once, at the accounts service and at a keys
 * service team route alike, with the bearer token alone; the console's log-out forms call them.
 */
describe('log-out and log out everywhere (e2e)', function () {
  this.timeout(60_000);
  let stack: StackEnv;
  let platform: RunningPlatform;
  let accounts: string;
  let keys: string;
  let consoleUrl: string;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    stack = await useStack();
    const ports = { accounts: await freePort(), keys: await freePort(), console: await freePort() };
    accounts = `http://127.0.0.1:${ports.accounts}`;
    keys = `http://127.0.0.1:${ports.keys}`;
    consoleUrl = `http://127.0.0.1:${ports.console}`;
    platform = await startServices(
      [accountsService, keysService, consoleService],
      testEnv(stack, {
        JWT_SECRET,
        ACCOUNTS_PORT: String(ports.accounts),
        KEYS_PORT: String(ports.keys),
        CONSOLE_PORT: String(ports.console),
        AUTH_URL: keys,
        ACCOUNTS_PUBLIC_URL: accounts,
        CONSOLE_PUBLIC_URL: consoleUrl,
        WEBHOOK_SECRET: 'ab'.repeat(32),
        KEY_ENCRYPTION_KEY: 'cd'.repeat(32),
        CONSOLE_SECRET: 'ef'.repeat(32),
      }),
      testLogger(),
    );
  });

  after(async () => {
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
  });

  useContractCheck();

  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const status = async (url: string, token: string) => (await fetch(url, { headers: bearer(token) })).status;
  /** The token's answers at the accounts service and at a keys service team route. */
  const answers = async (token: string) => [await status(`${accounts}/auth/me`, token), await status(`${keys}/teams`, token)];

  async function newAccount(): Promise<{ email: string; password: string; userId: string; token: string }> {
    const email = `out-${randomUUID().slice(0, 8)}@example.test`;
    const password = `pw-${randomUUID()}`;
    const signup = await postJson(`${accounts}/auth/signup`, { email, password, name: 'Leaving' });
    expect(signup.status, signup.text).to.equal(201);
    return { email, password, userId: (signup.body.user as { id: string }).id, token: signup.body.token as string };
  }
  const login = async (email: string, password: string): Promise<string> => {
    const res = await postJson(`${accounts}/auth/login`, { email, password });
    expect(res.status, res.text).to.equal(200);
    return res.body.token as string;
  };
  const auditEntries = (userId: string) =>
    eventually(`account.logged-out of ${userId} in the audit log`, async () => {
      const entries = await (await auditLog(platform.runtime.mongo.db)).find({ userId, action: 'account.logged-out' }).toArray();
      return entries.length > 0 ? entries : undefined;
    });

  it('refuses the logged-out token at once at /auth/me and at GET /teams; the account’s other token still works', async () => {
    const account = await newAccount();
    const other = await login(account.email, account.password);
    expect(await answers(account.token)).to.deep.equal([200, 200]);

    const out = await postJson(`${accounts}/auth/logout`, {}, bearer(account.token));
    expect(out.status, out.text).to.equal(200);
    expect(out.body).to.deep.equal({ revoked: 'this' });
    expect(out.headers.get('cache-control')).to.equal('no-store');
    // The very next requests, with no waiting: refused by both services.
    expect(await answers(account.token)).to.deep.equal([401, 401]);
    expect(await answers(other)).to.deep.equal([200, 200]);

    // A logged-out token opens nothing: not a second log-out, not log out everywhere, not a password change.
    expect((await postJson(`${accounts}/auth/logout`, {}, bearer(account.token))).status).to.equal(401);
    expect((await postJson(`${accounts}/auth/logout-all`, {}, bearer(account.token))).status).to.equal(401);
    const change = await postJson(
      `${accounts}/auth/password`,
      { currentPassword: account.password, newPassword: 'another password' },
      bearer(account.token),
    );
    expect(change.status).to.equal(401);
    expect(await answers(other)).to.deep.equal([200, 200]);

    const [entry] = await auditEntries(account.userId);
    expect(entry).to.deep.include({ actor: `account:${account.userId}`, details: { scope: 'this' } });
    expect(JSON.stringify(entry)).not.to.include(account.token);
    const revoked = await platform.runtime.mongo.db.collection(REVOKED_TOKENS_COLLECTION).find({ userId: account.userId }).toArray();
    expect(revoked).to.have.length(1);
    expect(JSON.stringify(revoked)).not.to.include(account.token);
  });

  it('logs out everywhere: two tokens of the account are refused at once; a new log-in works', async () => {
    const account = await newAccount();
    const second = await login(account.email, account.password);
    const out = await postJson(`${accounts}/auth/logout-all`, {}, bearer(second));
    expect(out.status, out.text).to.equal(200);
    expect(out.body).to.deep.equal({ revoked: 'all' });
    expect(await answers(account.token)).to.deep.equal([401, 401]);
    expect(await answers(second)).to.deep.equal([401, 401]);
    const third = await login(account.email, account.password);
    expect(await answers(third)).to.deep.equal([200, 200]);
    const [entry] = await auditEntries(account.userId);
    expect(entry?.details).to.deep.equal({ scope: 'all' });
    // Again, from the version the first one moved to; the password still changes after it.
    expect((await postJson(`${accounts}/auth/logout-all`, {}, bearer(third))).status).to.equal(200);
    expect(await answers(third)).to.deep.equal([401, 401]);
    const fourth = await login(account.email, account.password);
    const change = await postJson(
      `${accounts}/auth/password`,
      { currentPassword: account.password, newPassword: 'a new password' },
      bearer(fourth),
    );
    expect(change.status, change.text).to.equal(200);
    expect(await answers(change.body.token as string)).to.deep.equal([200, 200]);
  });

  it('answers two log-outs of one token racing each other as one: the token refused, one record', async () => {
    const account = await newAccount();
    const both = await Promise.all([1, 2].map(() => postJson(`${accounts}/auth/logout`, {}, bearer(account.token))));
    expect(both.map((r) => r.status)).to.include(200);
    for (const r of both) expect([200, 401], r.text).to.include(r.status);
    expect(await answers(account.token)).to.deep.equal([401, 401]);
    expect(await platform.runtime.mongo.db.collection(REVOKED_TOKENS_COLLECTION).countDocuments({ userId: account.userId })).to.equal(1);
  });

  it('refuses every token of the account when a token from before log-out (no jti) logs out, and says so', async () => {
    const account = await newAccount();
    const { issuer, audience } = platform.runtime.config.jwt;
    const iat = Math.floor(Date.now() / 1000);
    // As issueToken signed them before this change: every claim but jti.
    const old = jwt.sign(
      { sub: account.userId, email: account.email, tier: 'free', ver: 0, iss: issuer, aud: audience, iat, exp: iat + 3600 },
      JWT_SECRET,
      { algorithm: 'HS256' },
    );
    expect(await answers(old)).to.deep.equal([200, 200]);
    const out = await postJson(`${accounts}/auth/logout`, {}, bearer(old));
    expect(out.status, out.text).to.equal(200);
    expect(out.body.revoked).to.equal('all');
    expect(out.body.reason).to.match(/issued before/);
    expect(await answers(old)).to.deep.equal([401, 401]);
    expect(await answers(account.token)).to.deep.equal([401, 401]);
  });

  it('answers 401 to a log-out without a token or with a forged one, changing nothing', async () => {
    expect((await postJson(`${accounts}/auth/logout`, {})).status).to.equal(401);
    expect((await postJson(`${accounts}/auth/logout-all`, {}, { authorization: 'Bearer not.a.token' })).status).to.equal(401);
    const account = await newAccount();
    const forged = jwt.sign({ ...(jwt.decode(account.token) as object) }, 'not-the-secret-0123456789abcdef-0123456789', {
      algorithm: 'HS256',
    });
    expect((await postJson(`${accounts}/auth/logout-all`, {}, bearer(forged))).status).to.equal(401);
    expect(await answers(account.token)).to.deep.equal([200, 200]);
  });

  describe('from the console', () => {
    /** A console page with the session cookie, and the CSRF token its forms carry. */
    const consolePage = async (token: string, path = '/account') => {
      const res = await fetch(`${consoleUrl}${path}`, { headers: { cookie: `svc_session=${token}` }, redirect: 'manual' });
      const html = await res.text();
      return { status: res.status, location: res.headers.get('location'), csrf: /name="csrf" value="([^"]+)"/.exec(html)?.[1] };
    };
    const submit = (path: string, token: string, csrf: string) =>
      fetch(`${consoleUrl}${path}`, {
        method: 'POST',
        headers: { cookie: `svc_session=${token}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf }),
        redirect: 'manual',
      });

    it('logs out with the header’s form: the cookie cleared and the token refused by the services', async () => {
      const account = await newAccount();
      const page = await consolePage(account.token);
      expect(page.status).to.equal(200);
      const res = await submit('/logout', account.token, page.csrf!);
      expect(res.status).to.equal(303);
      expect(res.headers.get('location')).to.equal('/login?out=1');
      expect(res.headers.getSetCookie().some((c) => /^svc_session=; .*Max-Age=0/.test(c))).to.equal(true);
      expect(await answers(account.token)).to.deep.equal([401, 401]);
      // A copy of the cookie (another tab, a stolen one) opens no console page either.
      expect(await consolePage(account.token)).to.include({ status: 303, location: '/login' });
    });

    it('logs out everywhere from the account page: another session of the account ends too', async () => {
      const account = await newAccount();
      const elsewhere = await login(account.email, account.password);
      const page = await consolePage(account.token);
      const res = await submit('/account/logout-all', account.token, page.csrf!);
      expect(res.status).to.equal(303);
      expect(res.headers.get('location')).to.equal('/login?out=all');
      expect(await answers(account.token)).to.deep.equal([401, 401]);
      expect(await answers(elsewhere)).to.deep.equal([401, 401]);
    });

    it('says so and keeps the session when the accounts service cannot be reached: no log-out is pretended', async () => {
      const account = await newAccount();
      const port = await freePort();
      // A console whose accounts service is down: nothing listens at its address.
      const lone = await startServices(
        [consoleService],
        testEnv(stack, {
          CONSOLE_PORT: String(port),
          CONSOLE_ACCOUNTS_URL: `http://127.0.0.1:${await freePort()}`,
          CONSOLE_SECRET: 'ef'.repeat(32),
        }),
        testLogger(),
      );
      try {
        const res = await fetch(`http://127.0.0.1:${port}/logout`, {
          method: 'POST',
          headers: { cookie: `svc_session=${account.token}`, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ csrf: csrfToken('ef'.repeat(32), account.token) }),
          redirect: 'manual',
        });
        expect(res.status).to.equal(503);
        expect(await res.text()).to.match(/still logged in/);
        expect(res.headers.getSetCookie().some((c) => c.startsWith('svc_session='))).to.equal(false);
      } finally {
        await lone.stop();
      }
      expect(await answers(account.token)).to.deep.equal([200, 200]);
    });

    it('refuses a log-out form without the session’s CSRF token: the session stays', async () => {
      const account = await newAccount();
      const res = await submit('/logout', account.token, 'forged');
      expect(res.status).to.equal(403);
      expect(await answers(account.token)).to.deep.equal([200, 200]);
    });
  });
});
