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
import { STACK_TIMEOUT_MS, currentStack, useStack } from '../../support/stack.ts';

describe('platform HTTP app, health and outage handling (integration)', function () {
  let runtime: Runtime;
  let base: string;
  let close: () => Promise<void>;
  const topic = uniqueTopic('http');

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    const env = await useStack();
    const log = testLogger();
    runtime = await createRuntime(testConfig(env, { KAFKA_PUBLISH_TIMEOUT_MS: '2000' }), log, { catalog: probeCatalog(topic) });
    const app: Express = createApp({ service: 'probe', log, bodyLimit: '1kb', health: runtime.health }, (a) => {
      a.post('/probe', async (req, res) => {
        const body = req.body as { probeId?: unknown };
        if (typeof body?.probeId !== 'string') throw badRequest('probeId is required');
        await runtime.publisher.publish(newEvent('probe.reset', { probeId: body.probeId }));
        res.status(202).json({ accepted: true });
      });
      a.get('/boom', () => {
        throw new Error('secret internal detail');
      });
    });
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

  it('answers 503 while Kafka is down and 202 again once it is back', async function () {
    this.timeout(180_000);
    const stack = await currentStack();
    let kafka;
    try {
      kafka = stack.component('kafka');
    } catch {
      this.skip(); // an external Kafka was given: the test does not stop other people's brokers
    }
    await kafka.stop();
    try {
      const down = await post('/probe', JSON.stringify({ probeId: randomUUID() }));
      expect(down.status).to.equal(503);
      expect(down.headers.get('retry-after')).to.equal('5');
      expect(await down.json()).to.deep.include({ code: 'UNAVAILABLE' });
      const health = await fetch(`${base}/health`);
      expect(health.status).to.equal(503);
    } finally {
      await kafka.start();
    }
    const up = await eventually('a publish after the restart', async () => {
      const res = await post('/probe', JSON.stringify({ probeId: randomUUID() }));
      return res.status === 202 ? res : undefined;
    }, 60_000);
    expect(up.status).to.equal(202);
  });
});
