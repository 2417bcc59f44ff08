import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { freePort } from '../../deploy/local/processes.ts';
import { hashKey } from '../../services/keys/key-format.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { VerificationCounts } from '../../services/keys/verifications.ts';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { eventually, testEnv, testLogger } from '../support/env.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';
import { useContractCheck } from '../support/contract-check.ts';

const SHARED_SECRET = 'ef'.repeat(32);

/** Per-key request rates set by the key's owner, and the key's verification counts in /usage. */
describe('key limits and verification counts: POST /keys/limits, GET /usage (e2e)', function () {
  this.timeout(60_000);
  let platform: RunningPlatform;
  let base: string;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    const stack = await useStack();
    const port = await freePort();
    platform = await startServices(
      [keysService],
      testEnv(stack, { KEYS_PORT: String(port), WEBHOOK_SECRET: SHARED_SECRET, KEY_ENCRYPTION_KEY: '12'.repeat(32) }),
      testLogger(),
    );
    base = `http://127.0.0.1:${port}`;
  });

  after(async () => {
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
  });

  useContractCheck();

  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
  };
  const mint = async (tier: 'free' | 'pro') => {
    const res = await call(
      'POST',
      '/generate',
      { customerId: `cus-${randomUUID().slice(0, 8)}`, email: 'limits@example.test', tier, subscriptionId: `sub-${randomUUID()}` },
      { authorization: `Bearer ${SHARED_SECRET}` },
    );
    expect(res.status).to.equal(201);
    return { apiKey: String(res.body.apiKey), subscriptionId: String(res.body.subscriptionId) };
  };
  const validate = (apiKey: string) => call('POST', '/validate', { apiKey });
  const setLimit = (apiKey: string, requestsPerMinute: unknown) =>
    call('POST', '/keys/limits', { requestsPerMinute }, { 'x-api-key': apiKey });

  it("applies the owner's lower limit to the key within a second, refuses one over the tier's, and goes back to the tier's on null", async () => {
    const { apiKey, subscriptionId } = await mint('pro');
    expect((await validate(apiKey)).headers.get('x-ratelimit-limit')).to.equal('600');

    const set = await setLimit(apiKey, 5);
    expect(set.status).to.equal(200);
    expect(set.body).to.deep.equal({ subscriptionId, last4: apiKey.slice(-4), requestsPerMinute: 5, tierRequestsPerMinute: 600 });
    await eventually(
      'the limit of 5 applied',
      async () => ((await validate(apiKey)).headers.get('x-ratelimit-limit') === '5' ? true : undefined),
      1000,
    );
    // Its own window: at most 5 in the minute (one went to the check above), then 429 with the limit named.
    const codes: number[] = [];
    for (let i = 0; i < 6; i++) codes.push((await validate(apiKey)).status);
    expect(codes.filter((c) => c === 200).length).to.be.at.most(4);
    expect(codes.at(-1)).to.equal(429);

    for (const [value, message] of [
      [601, /at most 600, the pro tier/],
      [0, /at least 1/],
      [2.5, /whole number/],
      ['10', /whole number/],
    ] as const) {
      const refused = await setLimit(apiKey, value);
      expect(refused.status, String(value)).to.equal(400);
      expect(refused.body.error).to.match(message);
    }
    const free = await mint('free');
    expect((await setLimit(free.apiKey, 61)).body.error).to.match(/at most 60, the free tier/);
    expect((await call('POST', '/keys/limits', { requestsPerMinute: 5 }, { 'x-api-key': `svc_${'x'.repeat(33)}` })).status).to.equal(401);

    expect((await setLimit(apiKey, null)).body).to.include({ requestsPerMinute: null });
    await eventually(
      'the tier’s limit back',
      async () => ((await validate(apiKey)).headers.get('x-ratelimit-limit') === '600' ? true : undefined),
      1000,
    );
  });

  it("counts the key's verifications per UTC day and outcome, and reports them with the limit in /usage", async () => {
    const { apiKey } = await mint('free');
    // Every request this test sends with the key is a verification, the polls for a limit to apply
    // too, and any of them can meet the old limit. So each answer is tallied, and the counts written
    // must come to the tally exactly: nothing lost, nothing counted twice.
    const seen = { VALID: 0, RATE_LIMITED: 0 };
    const tally = <T extends { status: number }>(res: T): T => {
      if (res.status === 200) seen.VALID++;
      else if (res.status === 429) seen.RATE_LIMITED++;
      else expect.fail(`a verification of a live key answered ${res.status}`);
      return res;
    };
    const counted = async (key: string) => tally(await validate(key));
    expect((await setLimit(apiKey, 3)).status).to.equal(200);
    await eventually(
      'the limit of 3 applied',
      async () => ((await counted(apiKey)).headers.get('x-ratelimit-limit') === '3' ? true : undefined),
      1000,
    );
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await counted(apiKey)).status);
    expect(statuses.filter((s) => s === 429).length).to.be.greaterThan(0);
    // Back to the tier's limit (a counter of its own), so /usage is not refused for the rest of the minute.
    expect((await setLimit(apiKey, null)).status).to.equal(200);
    await eventually(
      'the tier’s limit back',
      async () => ((await counted(apiKey)).headers.get('x-ratelimit-limit') === '60' ? true : undefined),
      1000,
    );

    // Read where the service writes them, as /usage does: polling /usage would add to the counts it waits for.
    const today = new Date().toISOString().slice(0, 10);
    const stored = new VerificationCounts(platform.runtime.mongo.db, { writer: 'test-reader', log: testLogger() });
    const since = new Date(`${today}T00:00:00Z`);
    const written = async () => (await stored.read(hashKey(apiKey), since)).find((d) => d.day === today)?.outcomes;
    const counts = await eventually(
      'the counts written',
      async () => {
        const found = await written();
        if (!found) return undefined;
        expect(found.VALID, 'VALID counts, never more than the answers').to.be.at.most(seen.VALID);
        expect(found.RATE_LIMITED, 'RATE_LIMITED counts, never more than the answers').to.be.at.most(seen.RATE_LIMITED);
        return found.VALID === seen.VALID && found.RATE_LIMITED === seen.RATE_LIMITED ? found : undefined;
      },
      10_000,
    ).catch(async (err: unknown) => {
      expect(await written(), 'the counts written, against every answer this test had').to.include(seen);
      throw err;
    });
    expect(counts).to.deep.equal({ ...seen, USAGE_EXCEEDED: 0, DISABLED: 0, EXPIRED: 0 });

    // /usage reports them: this request is one more, in its own answer if a write fell between its count and its read.
    const usage = await call('GET', '/usage', undefined, { authorization: `Bearer ${apiKey}` });
    expect(usage.status).to.equal(200);
    expect(usage.body.requestsPerMinute).to.equal(60);
    const reported = usage.body.verifications as { day: string; outcomes: Record<string, number> }[];
    expect(reported.map((d) => d.day)).to.deep.equal([today]);
    expect(Object.keys(reported[0]!.outcomes).sort()).to.deep.equal(['DISABLED', 'EXPIRED', 'RATE_LIMITED', 'USAGE_EXCEEDED', 'VALID']);
    expect(reported[0]!.outcomes).to.include({ RATE_LIMITED: seen.RATE_LIMITED, USAGE_EXCEEDED: 0, DISABLED: 0, EXPIRED: 0 });
    expect(reported[0]!.outcomes.VALID).to.be.oneOf([seen.VALID, seen.VALID + 1]);
    // Another key's counts are its own.
    const other = await mint('free');
    const otherUsage = await call('GET', '/usage', undefined, { authorization: `Bearer ${other.apiKey}` });
    expect(otherUsage.body.verifications).to.deep.equal([]);
  });
});
