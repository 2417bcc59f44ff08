import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Express } from 'express';
import { newEvent } from '../../../events/envelope.ts';
import { createApp } from '../../../services/platform/http/app.ts';
import { badRequest } from '../../../services/platform/http/errors.ts';
import { createRuntime, type Runtime } from '../../../services/platform/runtime.ts';
import { listen } from '../../../services/platform/service.ts';
import { eventually, testConfig, testLogger } from '../../support/env.ts';
import { probeCatalog, uniqueTopic } from '../../support/probe.ts';
import { STACK_TIMEOUT_MS, useStack, ownKafka } from '../../support/stack.ts';

describe('platform HTTP app, health and outage handling (integration)', () => {
  let runtime: Runtime;
  let base: string;
  let close: () => Promise<void>;
  const topic = uniqueTopic('http');
  const OPS_TOKEN = 'ops-token-0123456789abcdef';
  const health = async (authorization?: string) => {
    const res = await fetch(`${base}/health`, authorization ? { headers: { authorization } } : {});
    return {
      status: res.status,
      body: (await res.json()) as {
        status: string;
        checks: Record<string, { ok: boolean; error?: string }>;
        consumers: { group: string; ok: boolean; problem?: string }[];
      },
    };
  };

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    const env = await useStack();
    const log = testLogger();
    runtime = await createRuntime(testConfig(env, { KAFKA_PUBLISH_TIMEOUT_MS: '2000' }), log, { catalog: probeCatalog(topic) });
    // A private listener's app (OPS_PORT, ADMIN_PORT): it serves /metrics.
    const app: Express = createApp(
      { service: 'probe', log, bodyLimit: '1kb', health: runtime.health, healthDetailsToken: OPS_TOKEN, metrics: true },
      (a) => {
        a.post('/probe', async (req, res) => {
          const body = req.body as { probeId?: unknown };
          if (typeof body?.probeId !== 'string') throw badRequest('probeId is required');
          await runtime.publisher.publish(newEvent('probe.reset', { probeId: body.probeId }));
          res.status(202).json({ accepted: true });
        });
        a.get('/boom', () => {
          throw new Error('secret internal detail');
        });
        a.get('/items/:id', (req, res) => {
          res.json({ id: req.params.id });
        });
      },
    );
    const server = await listen(app, '127.0.0.1', 0);
    base = server.url;
    close = server.close;
  });

  after(async () => {
    await close?.();
    await runtime?.mongo.db.dropDatabase().catch(() => undefined);
    await runtime?.close();
  });

  const post = (path: string, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
    fetch(`${base}${path}`, { method: 'POST', body, headers });

  it('reports Kafka and MongoDB in /health and serves Prometheus metrics', async () => {
    const res = await fetch(`${base}/health`);
    expect(res.status).to.equal(200);
    const body = (await res.json()) as { status: string; checks: Record<string, { ok: boolean }> };
    expect(body.status).to.equal('ok');
    expect(body.checks.kafka?.ok).to.equal(true);
    expect(body.checks.mongodb?.ok).to.equal(true);
    await post('/probe', JSON.stringify({ probeId: 'm' }));
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).to.match(/svc_http_request_duration_seconds_bucket\{[^}]*route="\/probe"/);
    expect(metrics).to.include('svc_events_published_total');
  });

  it('serves /metrics on private listeners only: a public face answers 404', async () => {
    const publicFace = await listen(
      createApp({ service: 'public', log: testLogger(), bodyLimit: '1kb', health: runtime.health }, () => undefined),
      '127.0.0.1',
      0,
    );
    try {
      const res = await fetch(`${publicFace.url}/metrics`);
      expect(res.status).to.equal(404);
      expect(await res.text()).to.not.include('svc_');
    } finally {
      await publicFace.close();
    }
  });

  it('answers bad input with JSON errors: 400, 413, 404, and a 500 that hides the detail', async () => {
    const malformed = await post('/probe', '{"probeId":');
    expect(malformed.status).to.equal(400);
    expect(await malformed.json()).to.deep.include({ code: 'MALFORMED_JSON' });
    const missing = await post('/probe', '{}');
    expect(missing.status).to.equal(400);
    expect(await missing.json()).to.deep.include({ error: 'probeId is required' });
    const large = await post('/probe', JSON.stringify({ probeId: 'x'.repeat(2048) }));
    expect(large.status).to.equal(413);
    expect(await large.json()).to.deep.include({ code: 'PAYLOAD_TOO_LARGE' });
    const nowhere = await fetch(`${base}/nowhere`);
    expect(nowhere.status).to.equal(404);
    expect(await nowhere.json()).to.have.property('error');
    const boom = await fetch(`${base}/boom`);
    expect(boom.status).to.equal(500);
    const text = await boom.text();
    expect(text).not.to.include('secret internal detail');
    expect(boom.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
  });

  // Found by npm run fuzz: body-parser's and the router's own 4xx errors fell through to the 500.
  it('answers a body that does not decode and a path parameter that is not percent-encoding with 400, not 500', async () => {
    for (const encoding of ['gzip', 'deflate', 'br']) {
      const res = await post('/probe', 'not compressed at all', { 'content-type': 'application/json', 'content-encoding': encoding });
      expect(res.status, encoding).to.equal(400);
      expect(await res.json()).to.deep.include({ code: 'BAD_REQUEST' });
    }
    for (const id of ['%E0%A4%A', '%ZZ', 'a%']) {
      const res = await fetch(`${base}/items/${id}`);
      expect(res.status, id).to.equal(400);
      const text = await res.text();
      expect(JSON.parse(text)).to.deep.include({ code: 'BAD_REQUEST' });
      expect(text, 'the answer does not quote the request').not.to.include(id);
    }
    expect(await (await fetch(`${base}/items/a%20b`)).json()).to.deep.equal({ id: 'a b' });
  });

  it('reports a consumer waiting on a dependency, and a stopped one, as not ready; liveness stays up', async function () {
    this.timeout(60_000);
    const { MongoClient } = await import('mongodb');
    const { ConsumerRunner } = await import('../../../events/consumer.ts');
    // A handler whose database is gone: every attempt fails with a transient error.
    const gone = new MongoClient(runtime.config.mongo.uri, { serverSelectionTimeoutMS: 300 });
    await gone.connect();
    await gone.close();
    const runner = new ConsumerRunner({
      kafka: runtime.kafka,
      codec: runtime.codec,
      publisher: runtime.publisher,
      log: runtime.log,
      groupId: `blocked-${randomUUID()}`,
      topics: [runtime.catalog.topicOf('probe.reset')],
      backoff: { initialMs: 50, maxMs: 200 },
      handler: { handle: async () => void (await gone.db('x').collection('y').insertOne({ at: new Date() })) },
    });
    runtime.track(runner);
    await runner.start();
    try {
      expect((await health()).status).to.equal(200);
      await runtime.publisher.publish(newEvent('probe.reset', { probeId: `blocked-${randomUUID()}` }));
      const blocked = await eventually(
        'readiness to report the blocked consumer',
        async () => {
          const report = await health(`Bearer ${OPS_TOKEN}`);
          return report.status === 503 ? report : undefined;
        },
        30_000,
      );
      const mine = blocked.body.consumers.find((c) => c.group === runner.groupId);
      expect(mine?.ok).to.equal(false);
      expect(mine?.problem).to.match(/^waiting for a dependency: Mongo/);
      expect((await health()).body.consumers.find((c) => c.group === runner.groupId)).not.to.have.property('problem');
      expect((await fetch(`${base}/health/live`)).status).to.equal(200);
    } finally {
      await runner.stop();
    }
    const stopped = await health(`Bearer ${OPS_TOKEN}`);
    expect(stopped.status).to.equal(503);
    expect(stopped.body.consumers.find((c) => c.group === runner.groupId)?.problem).to.equal('stopped');
  });

  it('answers 503 while Kafka is down and 202 again once it is back', async function () {
    this.timeout(180_000);
    const kafka = await ownKafka(this);
    await kafka.stop();
    try {
      const down = await post('/probe', JSON.stringify({ probeId: randomUUID() }));
      expect(down.status).to.equal(503);
      expect(down.headers.get('retry-after')).to.equal('5');
      expect(await down.json()).to.deep.include({ code: 'UNAVAILABLE' });
      // Readiness fails, the reason only for whoever holds the ops token; liveness stays up, so an
      // outage of a dependency does not get every pod restarted.
      const anonymous = await health();
      expect(anonymous.status).to.equal(503);
      expect(anonymous.body.checks.kafka).to.deep.include({ ok: false });
      expect(anonymous.body.checks.kafka).not.to.have.property('error');
      const operator = await health(`Bearer ${OPS_TOKEN}`);
      expect(operator.body.checks.kafka?.error).to.be.a('string');
      expect((await health('Bearer not-the-token')).body.checks.kafka).not.to.have.property('error');
      const live = await fetch(`${base}/health/live`);
      expect(live.status).to.equal(200);
    } finally {
      await kafka.start();
    }
    const up = await eventually(
      'a publish after the restart',
      async () => {
        const res = await post('/probe', JSON.stringify({ probeId: randomUUID() }));
        return res.status === 202 ? res : undefined;
      },
      60_000,
    );
    expect(up.status).to.equal(202);
  });
});

describe('graceful stop of an HTTP face (integration)', () => {
  const health = { dependencies: {}, consumers: () => [], stopping: () => false };
  /** A face whose one route signals when a request is inside it and answers when released (or never). */
  async function face(drainMs: number) {
    let entered: () => void = () => undefined;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    const app = createApp({ service: 'drain', log: testLogger(), bodyLimit: '1kb', health }, (a) => {
      a.get('/slow', async (_req, res) => {
        entered();
        await released;
        res.json({ finished: true });
      });
    });
    const server = await listen(app, '127.0.0.1', 0, { drainMs });
    return { server, inside, release };
  }

  it('finishes the requests in flight, refuses new connections, and ends within its drain bound', async () => {
    const { server, inside, release } = await face(2000);
    const inFlight = fetch(`${server.url}/slow`);
    await inside;
    const closing = server.close();
    release();
    const res = await inFlight;
    expect(res.status).to.equal(200);
    expect(await res.json()).to.deep.equal({ finished: true });
    await closing;
    const refused = await fetch(`${server.url}/slow`).then(
      () => 'answered',
      (err: Error) => (err.cause as { code?: string } | undefined)?.code ?? err.message,
    );
    expect(refused).to.equal('ECONNREFUSED');
  });

  it('cuts a request that outlives the drain bound, so a stop always ends', async () => {
    const { server, inside } = await face(300);
    const stuck = fetch(`${server.url}/slow`).then(
      () => 'answered',
      () => 'cut',
    );
    await inside;
    const started = Date.now();
    await server.close();
    expect(Date.now() - started).to.be.lessThan(2000);
    expect(await stuck).to.equal('cut');
  });
});
