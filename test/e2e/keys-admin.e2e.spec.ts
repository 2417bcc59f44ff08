import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { freePort } from '../../deploy/local/processes.ts';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { eventually, testEnv, testLogger } from '../support/env.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';
import { useContractCheck } from '../support/contract-check.ts';

const SHARED_SECRET = 'ad'.repeat(32);

describe('the keys service with ADMIN_PORT: back-office routes off the public port (e2e)', function () {
  this.timeout(60_000);
  let stack: StackEnv;
  let platform: RunningPlatform;
  let publicUrl: string;
  let adminUrl: string;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    stack = await useStack();
    const [keysPort, adminPort] = [await freePort(), await freePort()];
    platform = await startServices(
      [keysService],
      testEnv(stack, { KEYS_PORT: String(keysPort), ADMIN_PORT: String(adminPort), WEBHOOK_SECRET: SHARED_SECRET }),
      testLogger(),
    );
    publicUrl = `http://127.0.0.1:${keysPort}`;
    adminUrl = `http://127.0.0.1:${adminPort}`;
  });

  after(async () => {
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
  });

  // Every answer of this spec, checked against the answering face's OpenAPI document.
  useContractCheck();

  const post = (url: string, body: unknown) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${SHARED_SECRET}` },
      body: JSON.stringify(body),
    });
  const generateBody = () => ({ customerId: 'cus-admin', email: 'admin@example.test', tier: 'pro', subscriptionId: `sub-${randomUUID()}` });

  it('reports the admin listener beside the public one', () => {
    expect(platform.services.find((s) => s.name === 'keys')).to.deep.include({ url: publicUrl, adminUrl });
  });

  it('answers 404 for /generate and /revoke on the public port, even with the shared secret', async () => {
    expect((await post(`${publicUrl}/generate`, generateBody())).status).to.equal(404);
    expect((await post(`${publicUrl}/revoke`, { subscriptionId: 'sub-x' })).status).to.equal(404);
  });

  it('mints and revokes on the admin port, and the key then works (and stops working) on the public one', async () => {
    const body = generateBody();
    const created = await post(`${adminUrl}/generate`, body);
    expect(created.status).to.equal(201);
    expect(created.headers.get('cache-control')).to.equal('no-store');
    const { apiKey } = (await created.json()) as { apiKey: string };
    const valid = await post(`${publicUrl}/validate`, { apiKey });
    expect(await valid.json()).to.deep.include({ valid: true, tier: 'pro' });
    expect((await post(`${adminUrl}/revoke`, { subscriptionId: body.subscriptionId })).status).to.equal(200);
    const refused = await eventually(
      'the revoked key refused',
      async () => {
        const answer = (await (await post(`${publicUrl}/validate`, { apiKey })).json()) as { valid: boolean };
        return answer.valid ? undefined : answer;
      },
      2000,
    );
    expect(refused).to.deep.include({ valid: false, code: 'DISABLED' });
  });

  it('serves its own /health, and none of the public routes', async () => {
    const health = await fetch(`${adminUrl}/health`);
    expect(health.status).to.equal(200);
    expect(await health.json()).to.deep.include({ service: 'keys-admin' });
    expect((await post(`${adminUrl}/validate`, { apiKey: `svc_${'A'.repeat(33)}` })).status).to.equal(404);
  });
});
