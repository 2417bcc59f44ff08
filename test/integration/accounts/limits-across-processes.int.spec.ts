import { mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { freePort } from '../../../deploy/local/processes.ts';
import { connectMongo } from '../../../services/platform/mongo.ts';
import { ServiceProcess } from '../../faults/service-processes.ts';
import { testEnv } from '../../support/env.ts';
import { postJson } from '../../support/http.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';

/**
 * Two `svc run accounts` processes, as two production replicas, on one database: the log-in and
 * sign-up budgets are one budget between them, and a restart of both does not give it back.
 * (With the counts in each process's memory, each replica allowed the whole budget again.) The
 * spec runs well within half of each window, so a window boundary during it changes nothing
 * (shared-limits.ts: every limit is two windows half a window apart).
 */
describe('log-in and sign-up limits across two accounts processes (integration)', function () {
  this.timeout(240_000);
  let replicas: ServiceProcess[] = [];
  let urls: string[] = [];
  let env: NodeJS.ProcessEnv;
  let logs: string;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    const stack = await useStack();
    const ports = [await freePort(), await freePort()];
    logs = mkdtempSync(join(resolve('.data'), `test-${process.pid}-limits-`));
    env = {
      ...process.env,
      ...testEnv(stack, {
        JWT_SECRET: 'limits-test-secret-0123456789abcdef-0123',
        LOGIN_FAILURES_PER_EMAIL: '3',
        SIGNUPS_PER_IP_PER_HOUR: '3',
      }),
    };
    replicas = ports.map((port, i) => new ServiceProcess('accounts', { ...env, ACCOUNTS_PORT: String(port) }, port, logs, `accounts-${i}`));
    urls = ports.map((port) => `http://127.0.0.1:${port}`);
    await Promise.all(replicas.map((r) => r.start()));
  });

  after(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    if (env?.MONGODB_URI && env.MONGODB_DB) {
      const mongo = await connectMongo(env.MONGODB_URI, env.MONGODB_DB);
      await mongo.db.dropDatabase().catch(() => undefined);
      await mongo.client.close();
    }
    if (logs) rmSync(logs, { recursive: true, force: true });
  });

  const email = `shared-${randomUUID().slice(0, 8)}@example.test`;
  const login = (i: number, password: string) => postJson(`${urls[i]}/auth/login`, { email, password });

  it('refuses the 4th wrong password of a 3-attempt budget whichever replica it reaches, with 429 and Retry-After', async () => {
    const signup = await postJson(`${urls[0]}/auth/signup`, { email, password: 'the right password', name: 'Shared' });
    expect(signup.status, signup.text).to.equal(201);
    const answers = [await login(0, 'wrong one'), await login(1, 'wrong two'), await login(0, 'wrong three')];
    expect(answers.map((a) => a.status)).to.deep.equal([401, 401, 401]);
    for (const i of [1, 0]) {
      const refused = await login(i, 'wrong four');
      expect(refused.status, `replica ${i}`).to.equal(429);
      expect(refused.body.code).to.equal('RATE_LIMITED');
      expect(Number(refused.headers.get('retry-after'))).to.be.greaterThan(0);
    }
    // The right password too: the budget is spent until the window ends.
    expect((await login(1, 'the right password')).status).to.equal(429);
  });

  it('keeps the count when both replicas restart', async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    await Promise.all(replicas.map((r) => r.start()));
    expect((await login(0, 'the right password')).status).to.equal(429);
    expect((await login(1, 'wrong five')).status).to.equal(429);
  });

  it('shares the sign-ups of one address: the 4th of a 3-per-hour budget is refused on either replica', async () => {
    // One sign-up of this address was counted above (and survived the restart).
    const signup = (i: number) =>
      postJson(`${urls[i]}/auth/signup`, { email: `s-${randomUUID().slice(0, 8)}@example.test`, password: 'long enough', name: 'S' });
    expect((await signup(1)).status).to.equal(201);
    expect((await signup(0)).status).to.equal(201);
    for (const i of [1, 0]) {
      const refused = await signup(i);
      expect(refused.status, `replica ${i}`).to.equal(429);
      expect(Number(refused.headers.get('retry-after'))).to.be.greaterThan(0);
    }
  });
});
