import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { expect } from 'chai';
import express from 'express';
import { freePort } from '../../deploy/local/processes.ts';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { newEvent } from '../../events/envelope.ts';
import { keyGate, type GatedLocals } from '../../services/keys/gate.ts';
import { hashKey } from '../../services/keys/key-format.ts';
import { RemoteValidator } from '../../services/keys/remote-validator.ts';
import type { KeyValidator } from '../../services/keys/validator.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { getUsage, periodKey, usageProjection } from '../../services/keys/usage.ts';
import { projectionCollection } from '../../events/collections.ts';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { listen } from '../../services/platform/service.ts';
import { eventually, testEnv, testLogger } from '../support/env.ts';
import { replayWith } from '../support/replay.ts';
import { windowWithRoom } from '../support/rate-windows.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';
import { useContractCheck } from '../support/contract-check.ts';

const SHARED_SECRET = 'ef'.repeat(32);
const PRICING_URL = 'https://svc.example/pricing';

describe('key validation, usage, quotas, rate limits and the gate (e2e)', function () {
  this.timeout(60_000);
  let stack: StackEnv;
  let platform: RunningPlatform;
  let base: string;
  let premium: { url: string; close(): Promise<void> };

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    stack = await useStack();
    const port = await freePort();
    platform = await startServices(
      [keysService],
      testEnv(stack, { KEYS_PORT: String(port), WEBHOOK_SECRET: SHARED_SECRET, PRICING_URL }),
      testLogger(),
    );
    base = `http://127.0.0.1:${port}`;
    // A premium server on another "host": it validates over HTTP against {auth_url}.
    const app = express();
    app.use(keyGate({ validator: new RemoteValidator(base), pricingUrl: PRICING_URL, publisher: platform.runtime.publisher }));
    app.get('/premium', (_req, res) => res.json({ ok: true, key: (res.locals as GatedLocals).apiKey }));
    app.use(((err, _req, res, _next) => res.status(503).json({ error: String(err) })) as express.ErrorRequestHandler);
    premium = await listen(app, '127.0.0.1', 0);
  });

  after(async () => {
    await premium?.close();
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
  });

  // Every answer of this spec, checked against the answering face's OpenAPI document.
  useContractCheck();

  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
  };
  const mint = async (tier: 'free' | 'pro' | 'team') => {
    const subscriptionId = `sub-${randomUUID()}`;
    const res = await post(
      '/generate',
      { customerId: `cus-${tier}`, email: `${tier}@example.test`, tier, subscriptionId },
      { authorization: `Bearer ${SHARED_SECRET}` },
    );
    expect(res.status).to.equal(201);
    return { apiKey: res.body.apiKey as string, subscriptionId };
  };
  const validate = (apiKey: string, extra: Record<string, unknown> = {}) => post('/validate', { apiKey, ...extra });
  const gated = (apiKey?: string, as: 'x-api-key' | 'bearer' = 'x-api-key') =>
    fetch(`${premium.url}/premium`, {
      headers: apiKey ? (as === 'bearer' ? { authorization: `Bearer ${apiKey}` } : { 'x-api-key': apiKey }) : {},
    });

  describe('POST /validate', () => {
    it('reports a pro key with unlimited usage and every feature', async () => {
      const { apiKey } = await mint('pro');
      const res = await validate(apiKey);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({
        valid: true,
        tier: 'pro',
        customerId: 'cus-pro',
        usage: { queries: { used: 0, limit: -1, remaining: -1 }, filesIndexed: { used: 0, limit: -1, remaining: -1 } },
        features: { visionRAG: true, unlimitedIndexing: true, unlimitedQueries: true, prioritySupport: true },
      });
      expect(res.headers.get('x-ratelimit-limit')).to.equal('600');
    });

    it('reports a free key with its quotas and no features, and a team key at 6000/min', async () => {
      const free = await validate((await mint('free')).apiKey);
      expect(free.body).to.deep.include({ valid: true, tier: 'free' });
      expect(free.body.usage).to.deep.equal({
        queries: { used: 0, limit: 100, remaining: 100 },
        filesIndexed: { used: 0, limit: 1000, remaining: 1000 },
      });
      expect(free.body.features).to.deep.equal({
        visionRAG: false,
        unlimitedIndexing: false,
        unlimitedQueries: false,
        prioritySupport: false,
      });
      const team = await validate((await mint('team')).apiKey);
      expect(team.body).to.deep.include({ valid: true, tier: 'team' });
      expect(team.headers.get('x-ratelimit-limit')).to.equal('6000');
    });

    it('answers {valid: false, error, code} for malformed, unknown and revoked keys, and 400 without a key', async () => {
      expect((await validate('svc_short')).body).to.deep.include({ valid: false, code: 'MALFORMED' });
      expect((await validate(`svc_${'A'.repeat(33)}`)).body).to.deep.include({ valid: false, code: 'NOT_FOUND' });
      const { apiKey, subscriptionId } = await mint('pro');
      // A control character in an identifier is the caller's mistake (it once reached the database: 500).
      const nul = await post('/revoke', { subscriptionId: `${subscriptionId}\u0000` }, { authorization: `Bearer ${SHARED_SECRET}` });
      expect(nul.status).to.equal(400);
      expect(nul.body.error).to.equal('subscriptionId must not contain control characters');
      expect((await post('/revoke', { subscriptionId }, { authorization: `Bearer ${SHARED_SECRET}` })).status).to.equal(200);
      const revoked = await validate(apiKey);
      expect(revoked.status).to.equal(200);
      expect(revoked.body).to.deep.include({ valid: false, code: 'DISABLED' });
      expect(revoked.body.error).to.be.a('string');
      const missing = await post('/validate', {});
      expect(missing.status).to.equal(400);
      expect(missing.body).to.deep.include({ valid: false });
    });

    it('refuses the 61st request in a minute on a free key with 429 and the rate-limit headers', async () => {
      const { apiKey } = await mint('free');
      const windowEnd = String((await windowWithRoom(60, 15_000)) / 1000);
      for (let i = 1; i <= 60; i++) {
        const ok = await validate(apiKey);
        expect(ok.status, `request ${i}`).to.equal(200);
        expect(ok.headers.get('x-ratelimit-remaining')).to.equal(String(60 - i));
        expect(ok.headers.get('x-ratelimit-reset'), `request ${i}: the window's end`).to.equal(windowEnd);
      }
      const limited = await validate(apiKey);
      expect(limited.status).to.equal(429);
      expect(limited.body).to.deep.include({ valid: false, code: 'RATE_LIMITED' });
      expect(limited.headers.get('x-ratelimit-limit')).to.equal('60');
      expect(limited.headers.get('x-ratelimit-remaining')).to.equal('0');
      expect(Number(limited.headers.get('retry-after'))).to.be.within(1, 60);
      expect(limited.headers.get('x-ratelimit-reset')).to.equal(windowEnd);
    });

    it('refuses a request that would pass the monthly quota (USAGE_EXCEEDED), exactly at the boundary', async () => {
      const { apiKey } = await mint('free');
      const rt = platform.runtime;
      const keyHash = hashKey(apiKey);
      await rt.publisher.publish(newEvent('usage.incremented', { keyHash, metric: 'queries', amount: 99, period: periodKey(new Date()) }));
      await eventually('99 queries counted', async () =>
        (await getUsage(rt.mongo.db, keyHash, periodKey(new Date()))).queries === 99 ? true : undefined,
      );
      const last = await validate(apiKey);
      expect(last.body).to.deep.include({ valid: true });
      expect((last.body.usage as Record<string, unknown>).queries).to.deep.equal({ used: 99, limit: 100, remaining: 1 });
      await rt.publisher.publish(newEvent('usage.incremented', { keyHash, metric: 'queries', amount: 1, period: periodKey(new Date()) }));
      await eventually('100 queries counted', async () =>
        (await getUsage(rt.mongo.db, keyHash, periodKey(new Date()))).queries === 100 ? true : undefined,
      );
      // Usage is cached for at most 500 ms in front of the projection: the refusal follows within that.
      const exceeded = await eventually(
        'the quota refusal',
        async () => {
          const res = await validate(apiKey);
          return res.body.valid === false ? res : undefined;
        },
        2000,
      );
      expect(exceeded.body).to.deep.include({ valid: false, code: 'USAGE_EXCEEDED' });
      const usage = await fetch(`${base}/usage`, { headers: { authorization: `Bearer ${apiKey}` } });
      expect(usage.status).to.equal(200);
      expect(((await usage.json()) as { usage: { queries: number } }).usage.queries).to.equal(100);
    });

    // POST /validate is answered in front of Express (validate-lean.ts) unless the body is chunked,
    // encoded, large or not plain JSON; then the Express route answers. Both must say the same.
    it('answers in front of Express exactly as the Express route does, for good and bad bodies', async () => {
      const { apiKey } = await mint('pro');
      const free = await mint('free');
      const raw = (bodyText: string, chunked: boolean, type = 'application/json') =>
        new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>((resolve, reject) => {
          const url = new URL(`${base}/validate`);
          const req = httpRequest(
            {
              host: url.hostname,
              port: url.port,
              path: url.pathname,
              method: 'POST',
              headers: { 'content-type': type, ...(chunked ? {} : { 'content-length': String(Buffer.byteLength(bodyText)) }) },
            },
            (res) => {
              const chunks: Buffer[] = [];
              res.on('data', (c: Buffer) => chunks.push(c));
              res.on('end', () =>
                resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
              );
            },
          );
          req.on('error', reject);
          // Two writes without a Content-Length: Node sends the body chunked.
          if (chunked) req.write(bodyText.slice(0, 1));
          req.end(chunked ? bodyText.slice(1) : bodyText);
        });
      const bodies = [
        JSON.stringify({ apiKey }),
        JSON.stringify({ apiKey: free.apiKey, metric: 'filesIndexed', amount: 3 }),
        JSON.stringify({ apiKey: free.apiKey, metric: 'screenshotsAnalyzed' }),
        JSON.stringify({ apiKey: `svc_${'B'.repeat(33)}` }),
        JSON.stringify({ apiKey: 'svc_short' }),
        JSON.stringify({ apiKey, metric: 'nope' }),
        JSON.stringify({ apiKey, amount: 0 }),
        `{"__proto__":{"x":1},"apiKey":"${apiKey}"}`,
        '{}',
        '{"apiKey":5}',
        '{"apiKey":""}',
        '[1]',
        '"svc"',
        '7',
        '{"apiKey":',
        `\uFEFF${JSON.stringify({ apiKey })}`,
      ];
      for (const text of bodies) {
        for (const type of ['application/json', 'application/json; charset=utf-8']) {
          const lean = await raw(text, false, type);
          const express = await raw(text, true, type);
          const what = `${type} ${text}`;
          expect(lean.status, what).to.equal(express.status);
          expect(lean.body, what).to.equal(express.body);
          for (const header of ['content-type', 'content-length', 'x-ratelimit-limit', 'cache-control', 'x-powered-by', 'etag']) {
            expect(lean.headers[header], `${what}: ${header}`).to.equal(express.headers[header]);
          }
          for (const header of ['x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after', 'x-request-id']) {
            expect(lean.headers[header] === undefined, `${what}: ${header}`).to.equal(express.headers[header] === undefined);
          }
        }
      }
      // A caller's request id is kept by both, as every service keeps it.
      const traced = await fetch(`${base}/validate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': 'trace-42' },
        body: JSON.stringify({ apiKey }),
      });
      expect(traced.headers.get('x-request-id')).to.equal('trace-42');
    });
  });

  describe('POST /generate', () => {
    it('answers the key, and a refusal, with Cache-Control: no-store', async () => {
      const body = { customerId: 'cus-nostore', email: 'nostore@example.test', tier: 'pro', subscriptionId: `sub-${randomUUID()}` };
      const created = await post('/generate', body, { authorization: `Bearer ${SHARED_SECRET}` });
      expect(created.status).to.equal(201);
      expect(created.body.apiKey).to.be.a('string');
      expect(created.headers.get('cache-control')).to.equal('no-store');
      const refused = await post('/generate', body, { authorization: 'Bearer wrong' });
      expect(refused.status).to.equal(401);
      expect(refused.headers.get('cache-control')).to.equal('no-store');
    });
  });

  describe('GET /usage', () => {
    it('reports tier, usage, limits, the first instant of next month (UTC), the key’s rate and its verifications', async () => {
      const { apiKey } = await mint('free');
      const res = await fetch(`${base}/usage`, { headers: { authorization: `Bearer ${apiKey}` } });
      expect(res.status).to.equal(200);
      const body = (await res.json()) as Record<string, unknown>;
      const now = new Date();
      const next = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
      const { verifications, key, ...rest } = body;
      // The key itself: its last four and dates, never its value.
      const facts = key as { last4: string; createdAt: string; expiresAt: string | null };
      expect(facts).to.deep.include({ last4: apiKey.slice(-4), expiresAt: null });
      expect(Date.now() - Date.parse(facts.createdAt)).to.be.within(0, 120_000);
      expect(JSON.stringify(body)).not.to.include(apiKey);
      expect(rest).to.deep.equal({
        tier: 'free',
        usage: { queries: 0, filesIndexed: 0, screenshotsAnalyzed: 0 },
        limits: { queries: 100, filesIndexed: 1000, screenshotsAnalyzed: 0 },
        resetDate: next.toISOString(),
        requestsPerMinute: 60,
      });
      // This request is the key's first verification: written within seconds, so in its own answer or not yet.
      const counted = (verifications as { outcomes: { VALID: number } }[]).map((d) => d.outcomes.VALID);
      expect([[], [1]]).to.deep.include(counted);
    });

    it('answers 401 for a missing or unknown key', async () => {
      expect((await fetch(`${base}/usage`)).status).to.equal(401);
      const unknown = await fetch(`${base}/usage`, { headers: { authorization: `Bearer svc_${'B'.repeat(33)}` } });
      expect(unknown.status).to.equal(401);
      expect(await unknown.json()).to.have.property('error');
    });
  });

  describe('the gate', () => {
    it('checks in order: no key 401, invalid 403 with upgrade, no visionRAG 403, else proceeds with the identity', async () => {
      const none = await gated();
      expect(none.status).to.equal(401);
      expect(await none.json()).to.have.property('error');
      const bad = await gated(`svc_${'C'.repeat(33)}`);
      expect(bad.status).to.equal(403);
      expect(await bad.json()).to.deep.include({ upgrade: PRICING_URL, code: 'NOT_FOUND' });
      const free = await gated((await mint('free')).apiKey);
      expect(free.status).to.equal(403);
      expect(await free.json()).to.deep.equal({ error: 'subscription required', code: 'SUBSCRIPTION_REQUIRED', upgrade: PRICING_URL });
      const pro = await mint('pro');
      const ok = await gated(pro.apiKey);
      expect(ok.status).to.equal(200);
      const body = (await ok.json()) as { key: { tier: string; keyHash: string } };
      expect(body.key).to.deep.include({ tier: 'pro', keyHash: hashKey(pro.apiKey) });
    });

    it('names the same reset second in every answer of a window, at the service and through a remote gate', async () => {
      // A client waiting for its window to turn reads X-RateLimit-Reset. It named the next second now and
      // then (the time left, added to a later reading of the clock), and more often through a remote gate,
      // which added the service's time left to its own clock again (the MCP batch spec failed on it in CI).
      const { apiKey } = await mint('pro');
      const windowEnd = String((await windowWithRoom(60, 15_000)) / 1000);
      for (let i = 1; i <= 150; i++) {
        const direct = await validate(apiKey);
        const through = await gated(apiKey);
        expect([direct.status, through.status], `request ${i}`).to.deep.equal([200, 200]);
        const resets = [direct.headers.get('x-ratelimit-reset'), through.headers.get('x-ratelimit-reset')];
        expect(resets, `request ${i}: the window's end, at the service and through the gate`).to.deep.equal([windowEnd, windowEnd]);
      }
    });

    it('answers a client that comes back before its Retry-After from memory, held back, without asking the key service again', async () => {
      // The key service behind a pass-through that counts what reaches it.
      let asked = 0;
      const relay = express();
      relay.use(express.raw({ type: '*/*' }));
      relay.post('/validate', async (req, res) => {
        asked++;
        const answer = await fetch(`${base}/validate`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': String(req.get('x-forwarded-for')) },
          body: req.body as Buffer,
        });
        answer.headers.forEach((value, name) => {
          if (name.startsWith('x-ratelimit') || name === 'retry-after') res.set(name, value);
        });
        res
          .status(answer.status)
          .type('application/json')
          .send(Buffer.from(await answer.arrayBuffer()));
      });
      const counted = await listen(relay, '127.0.0.1', 0);
      const app = express();
      app.use(keyGate({ validator: new RemoteValidator(counted.url), pricingUrl: PRICING_URL, publisher: platform.runtime.publisher }));
      app.get('/premium', (_req, res) => res.json({ ok: true }));
      const gate = await listen(app, '127.0.0.1', 0);
      try {
        const { apiKey } = await mint('free');
        await windowWithRoom(60, 15_000);
        for (let i = 1; i <= 60; i++) expect((await validate(apiKey)).status, `request ${i}`).to.equal(200);
        const first = await fetch(`${gate.url}/premium`, { headers: { 'x-api-key': apiKey } });
        expect(first.status).to.equal(429);
        expect(asked).to.equal(1);
        for (let i = 0; i < 3; i++) {
          const at = performance.now();
          const again = await fetch(`${gate.url}/premium`, { headers: { 'x-api-key': apiKey } });
          const took = performance.now() - at;
          expect(again.status).to.equal(429);
          expect(await again.json()).to.deep.include({ code: 'RATE_LIMITED' });
          expect(Number(again.headers.get('retry-after'))).to.be.within(1, 60);
          expect(again.headers.get('x-ratelimit-remaining')).to.equal('0');
          // Held back a quarter second: a client looping on refusals sends a few a second, not thousands.
          expect(took).to.be.at.least(200);
        }
        expect(asked, 'asked the key service again').to.equal(1);
        // Another key through the same gate is asked about as usual.
        expect((await fetch(`${gate.url}/premium`, { headers: { 'x-api-key': (await mint('pro')).apiKey } })).status).to.equal(200);
        expect(asked).to.equal(2);
      } finally {
        await gate.close();
        await counted.close();
      }
    });

    it('takes the key as Authorization: Bearer svc_… too (what a browser may send), and nothing else as a key', async () => {
      const pro = await mint('pro');
      expect((await gated(pro.apiKey, 'bearer')).status).to.equal(200);
      const notAKey = await fetch(`${premium.url}/premium`, { headers: { authorization: 'Bearer some-jwt-or-other-token' } });
      expect(notAKey.status).to.equal(401);
    });

    it('counts usage after N gated calls', async () => {
      const { apiKey } = await mint('team');
      for (let i = 0; i < 5; i++) expect((await gated(apiKey)).status).to.equal(200);
      const used = await eventually('5 queries counted', async () => {
        const res = await fetch(`${base}/usage`, { headers: { authorization: `Bearer ${apiKey}` } });
        const body = (await res.json()) as { usage: { queries: number } };
        return body.usage.queries === 5 ? body : undefined;
      });
      expect(used.usage.queries).to.equal(5);
    });

    it('replaying usage rebuilds the counts identically, and validation still agrees', async function () {
      this.timeout(120_000);
      const { apiKey } = await mint('free');
      expect((await validate(apiKey)).body).to.deep.include({ valid: true }); // cached before the replay
      const rt = platform.runtime;
      const { keyHash, period } = { keyHash: hashKey(apiKey), period: periodKey(new Date()) };
      await rt.publisher.publish([1, 2, 3].map((n) => newEvent('usage.incremented', { keyHash, metric: 'queries', amount: n, period })));
      await eventually('6 queries counted', async () => ((await getUsage(rt.mongo.db, keyHash, period)).queries === 6 ? true : undefined));
      const collection = async () => projectionCollection(rt.mongo.db, usageProjection.collection);
      const before = await (await collection()).find().sort({ _id: 1 }).toArray();
      await replayWith(rt, usageProjection as never);
      expect(await (await collection()).find().sort({ _id: 1 }).toArray()).to.deep.equal(before);
      const res = await fetch(`${base}/usage`, { headers: { authorization: `Bearer ${apiKey}` } });
      expect(((await res.json()) as { usage: { queries: number } }).usage.queries).to.equal(6);
      expect((await validate(apiKey)).body).to.deep.include({
        valid: true,
        usage: { queries: { used: 6, limit: 100, remaining: 94 }, filesIndexed: { used: 0, limit: 1000, remaining: 1000 } },
      });
    });

    it('admits exactly one of 50 concurrent metered uses at one below the quota, and gives back a use not served', async () => {
      // No tier with visionRAG has a finite quota today, so this gate lets a free key through as if
      // it had the feature: its 100 queries a month are the quota under test.
      const remote = new RemoteValidator(base);
      const asPremium: KeyValidator = {
        validate: async (apiKey, request) => {
          const outcome = await remote.validate(apiKey, request);
          return outcome.result.valid
            ? { ...outcome, result: { ...outcome.result, features: { ...outcome.result.features, visionRAG: true } } }
            : outcome;
        },
        reserve: (apiKey, request) => remote.reserve(apiKey, request),
        release: (apiKey, reservation) => remote.release(apiKey, reservation),
      };
      let publishing: 'ok' | 'down' = 'ok';
      const publisher = {
        publish: (...args: Parameters<typeof platform.runtime.publisher.publish>) =>
          publishing === 'down' ? Promise.reject(new Error('broker down')) : platform.runtime.publisher.publish(...args),
      };
      const app = express();
      app.use(keyGate({ validator: asPremium, pricingUrl: PRICING_URL, publisher }));
      app.get('/metered', (_req, res) => res.json({ ok: true }));
      app.use(((err, _req, res, _next) => res.status(503).json({ error: String(err) })) as express.ErrorRequestHandler);
      const metered = await listen(app, '127.0.0.1', 0);
      try {
        const { apiKey } = await mint('free');
        const rt = platform.runtime;
        const keyHash = hashKey(apiKey);
        await rt.publisher.publish(
          newEvent('usage.incremented', { keyHash, metric: 'queries', amount: 99, period: periodKey(new Date()) }),
        );
        await eventually(
          '99 queries counted',
          async () => ((await validate(apiKey)).body.usage as { queries: { used: number } } | undefined)?.queries.used === 99 || undefined,
        );
        const use = () => fetch(`${metered.url}/metered`, { headers: { 'x-api-key': apiKey } });

        // A use that cannot be recorded is not served, and its reservation is released.
        publishing = 'down';
        expect((await use()).status).to.equal(503);
        publishing = 'ok';

        const answers = await Promise.all(
          Array.from({ length: 50 }, async () => {
            const res = await use();
            return { status: res.status, body: (await res.json()) as Record<string, unknown> };
          }),
        );
        expect(answers.filter((a) => a.status === 200)).to.have.length(1);
        const refused = answers.filter((a) => a.status !== 200);
        expect(refused).to.have.length(49);
        for (const r of refused)
          expect(r).to.deep.include({
            status: 403,
            body: { error: 'monthly usage quota exceeded; upgrade for more', code: 'USAGE_EXCEEDED', upgrade: PRICING_URL },
          });
        await eventually('100 queries counted', async () =>
          (await getUsage(rt.mongo.db, keyHash, periodKey(new Date()))).queries === 100 ? true : undefined,
        );
        // A marker on the same key (same partition, applied in order) is the barrier: once it is
        // counted, every use published before it is too, and none was past the quota.
        await rt.publisher.publish(
          newEvent('usage.incremented', { keyHash, metric: 'screenshotsAnalyzed', amount: 1, period: periodKey(new Date()) }),
        );
        await eventually('the marker counted', async () =>
          (await getUsage(rt.mongo.db, keyHash, periodKey(new Date()))).screenshotsAnalyzed === 1 ? true : undefined,
        );
        expect((await getUsage(rt.mongo.db, keyHash, periodKey(new Date()))).queries).to.equal(100);
      } finally {
        await metered.close();
      }
    });

    it('refuses a revoked key within a second', async () => {
      const { apiKey, subscriptionId } = await mint('pro');
      expect((await gated(apiKey)).status).to.equal(200);
      expect((await validate(apiKey)).body).to.deep.include({ valid: true });
      await post('/revoke', { subscriptionId }, { authorization: `Bearer ${SHARED_SECRET}` });
      const refused = await eventually(
        'the gate refusing the revoked key',
        async () => {
          const res = await gated(apiKey);
          return res.status === 403 ? res : undefined;
        },
        1000,
      );
      expect(await refused.json()).to.deep.include({ code: 'DISABLED', upgrade: PRICING_URL });
    });
  });
});
