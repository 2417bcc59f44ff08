import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { freePort } from '../../deploy/local/processes.ts';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { accountsService } from '../../services/accounts/accounts.service.ts';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { testEnv, testLogger } from '../support/env.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';
import { useContractCheck } from '../support/contract-check.ts';

/** Sign-up and login limits against hostile clients, and whose address a limit counts (issue 15). */
describe('account service under abuse: sign-up and login limits, trusted proxies (e2e)', function () {
  this.timeout(60_000);
  let stack: StackEnv;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    stack = await useStack();
  });

  // Every answer of this spec, checked against the answering face's OpenAPI document.
  useContractCheck();

  /** An accounts service of its own per block: limits are per process, and each block sets its own. */
  function accounts(env: NodeJS.ProcessEnv) {
    const face = { base: '', platform: undefined as RunningPlatform | undefined };
    // biome-ignore lint/suspicious/noDuplicateTestHooks: each block calls accounts() for a service of its own, so each block has one hook
    before(async function () {
      this.timeout(STACK_TIMEOUT_MS);
      const port = await freePort();
      face.platform = await startServices([accountsService], testEnv(stack, { ACCOUNTS_PORT: String(port), ...env }), testLogger());
      face.base = `http://127.0.0.1:${port}`;
    });
    after(async () => {
      await face.platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
      await face.platform?.stop();
    });
    return face;
  }

  const email = () => `abuse-${randomUUID()}@example.test`;
  const post = async (base: string, path: string, body: unknown, forwardedFor?: string) => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
      body: JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
  };
  const signup = (base: string, forwardedFor?: string, name = 'Abuse Test') =>
    post(base, '/auth/signup', { email: email(), password: 'long enough', name }, forwardedFor);

  function expectLimited(res: Awaited<ReturnType<typeof post>>): void {
    expect(res.status).to.equal(429);
    expect(Number(res.headers.get('retry-after'))).to.be.greaterThan(0);
    expect(res.body.code).to.equal('RATE_LIMITED');
    expect(res.body.error).to.be.a('string');
  }

  describe('behind a trusted proxy (TRUST_PROXY=loopback), 3 sign-ups per IP per hour', () => {
    const face = accounts({
      TRUST_PROXY: 'loopback',
      SIGNUPS_PER_IP_PER_HOUR: '3',
      SIGNUPS_PER_MINUTE: '1000',
      LOGIN_ATTEMPTS_PER_IP_PER_MINUTE: '1000',
      LOGIN_FAILURES_PER_EMAIL: '10',
    });

    it('answers 429 with Retry-After to the 4th sign-up from one client, and still serves another client', async () => {
      for (let i = 0; i < 3; i++) expect((await signup(face.base, '203.0.113.5')).status, `sign-up ${i + 1}`).to.equal(201);
      expectLimited(await signup(face.base, '203.0.113.5'));
      expect((await signup(face.base, '203.0.113.6')).status).to.equal(201);
    });

    it('counts IPv6 clients per /64: one /64 shares a bucket, the next /64 has its own', async () => {
      expect((await signup(face.base, '2001:db8:15:1::1')).status).to.equal(201);
      expect((await signup(face.base, '2001:db8:15:1::2')).status).to.equal(201);
      expect((await signup(face.base, '2001:db8:15:1:ffff:ffff:ffff:fffe')).status).to.equal(201);
      expectLimited(await signup(face.base, '2001:db8:15:1:abcd::9'));
      expect((await signup(face.base, '2001:db8:15:2::1')).status).to.equal(201);
    });

    it('lets exactly the limit (10) of 30 concurrent wrong passwords for one e-mail be tried; the rest get 429', async () => {
      const address = email();
      expect(
        (await post(face.base, '/auth/signup', { email: address, password: 'right password', name: 'Target' }, '198.51.100.1')).status,
      ).to.equal(201);
      // Spread over many addresses, as a botnet would: only the per-e-mail limit can stop it.
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          post(face.base, '/auth/login', { email: address, password: `wrong password ${i}` }, `198.51.100.${10 + i}`),
        ),
      );
      const statuses = results.map((r) => r.status);
      expect(
        statuses.filter((s) => s === 401),
        statuses.join(','),
      ).to.have.length(10);
      expect(
        statuses.filter((s) => s === 429),
        statuses.join(','),
      ).to.have.length(20);
      for (const limited of results.filter((r) => r.status === 429)) expectLimited(limited);
      // The right password does not get through while the e-mail is limited either.
      expectLimited(await post(face.base, '/auth/login', { email: address, password: 'right password' }, '198.51.100.99'));
    });

    it('keeps control characters and line breaks out of a name, and refuses a name carrying a link', async () => {
      const res = await signup(face.base, '192.0.2.10', '  Eve\r\nBcc: victim\u0000\u202e ');
      expect(res.status).to.equal(201);
      expect((res.body.user as { name: string }).name).to.equal('Eve Bcc: victim');
      const linked = await signup(face.base, '192.0.2.11', 'Claim your prize at https://evil.example/win');
      expect(linked.status).to.equal(400);
      expect(linked.body.code).to.equal('BAD_REQUEST');
      expect(linked.body.error).to.match(/name/);
    });
  });

  describe('with TRUST_PROXY=off, 3 sign-ups per IP per hour', () => {
    const face = accounts({ TRUST_PROXY: 'off', SIGNUPS_PER_IP_PER_HOUR: '3', SIGNUPS_PER_MINUTE: '1000' });

    it('ignores X-Forwarded-For: a client cannot pick a fresh address per request', async () => {
      for (let i = 0; i < 3; i++) expect((await signup(face.base, `203.0.113.${20 + i}`)).status, `sign-up ${i + 1}`).to.equal(201);
      expectLimited(await signup(face.base, '203.0.113.30'));
    });
  });

  describe('with a global limit of 4 sign-ups per minute', () => {
    const face = accounts({ TRUST_PROXY: 'loopback', SIGNUPS_PER_IP_PER_HOUR: '1000', SIGNUPS_PER_MINUTE: '4' });

    it('answers 429 to the 5th sign-up of the minute whichever address it comes from', async () => {
      for (let i = 0; i < 4; i++) expect((await signup(face.base, `203.0.113.${40 + i}`)).status, `sign-up ${i + 1}`).to.equal(201);
      expectLimited(await signup(face.base, '203.0.113.50'));
    });
  });
});
