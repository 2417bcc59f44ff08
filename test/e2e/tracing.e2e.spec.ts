import { randomInt, randomUUID } from 'node:crypto';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { expect } from 'chai';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { freePort } from '../../deploy/local/processes.ts';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { billingService } from '../../services/billing/billing.service.ts';
import { webhookIngressService } from '../../services/billing/webhook-ingress.service.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { mailerService } from '../../services/mailer/mailer.service.ts';
import { installTracing, type Tracing } from '../../services/platform/tracing/sdk.ts';
import { eventually, testEnv, testLogger } from '../support/env.ts';
import { deliver, subscriptionPayload } from '../support/lemonsqueezy.ts';
import { mailTo } from '../support/mailpit.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';

const SIGNING_SECRET = 'e2e-trace-signing-secret-0123456789';
const SHARED_SECRET = 'ef'.repeat(32);
const KEY_ENCRYPTION_KEY = '7a'.repeat(32);
const PRO_VARIANT = 301789;

describe('traces: one payment webhook is one trace through ingress, billing, issuer, keys projection and mailer (e2e)', function () {
  this.timeout(90_000);
  const exporter = new InMemorySpanExporter();
  let stack: StackEnv;
  let tracing: Tracing | undefined;
  let platform: RunningPlatform | undefined;
  let ports: { keys: number; webhooks: number };
  let prefix: string;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    stack = await useStack();
    if (!stack.MAILPIT_URL) this.skip();
    ports = { keys: await freePort(), webhooks: await freePort() };
    // Installed before the services start: their database client and HTTP faces are set up traced.
    // Simple processor: each span is in the exporter as soon as it ends.
    tracing = installTracing({ serviceName: 'svc-test', exporter, processor: 'simple' });
    const env = testEnv(stack, {
      KEYS_PORT: String(ports.keys),
      WEBHOOKS_PORT: String(ports.webhooks),
      PAYMENT_WEBHOOK_SECRET: SIGNING_SECRET,
      WEBHOOK_SECRET: SHARED_SECRET,
      KEY_ENCRYPTION_KEY,
      PAYMENT_VARIANT_TIERS: `${PRO_VARIANT}:pro`,
    });
    prefix = env.KAFKA_TOPIC_PREFIX!;
    platform = await startServices([keysService, webhookIngressService, billingService, mailerService], env, testLogger());
  });

  after(async () => {
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
    await tracing?.shutdown();
  });

  const spans = () => exporter.getFinishedSpans();
  const inTrace = (traceId: string) => spans().filter((s) => s.spanContext().traceId === traceId);
  const consumerIn = (traceId: string, group: string) =>
    inTrace(traceId).filter((s) => s.kind === SpanKind.CONSUMER && s.attributes['messaging.consumer.group.name'] === prefix + group);
  const parentOf = (span: ReadableSpan): ReadableSpan | undefined =>
    spans().find((s) => s.spanContext().spanId === span.parentSpanContext?.spanId);

  it('follows the webhook from the HTTP ingress through every consumer to the SMTP send, with no secret or address in any span', async () => {
    const sub = { id: String(randomInt(10_000_000, 99_999_999)), email: `traced-${randomUUID()}@example.test` };
    const payload = subscriptionPayload('subscription_created', {
      subscriptionId: sub.id,
      userId: null,
      attributes: { user_email: sub.email, variant_id: PRO_VARIANT },
    });
    const answer = await deliver(`http://127.0.0.1:${ports.webhooks}`, SIGNING_SECRET, payload);
    expect(answer.status).to.equal(200);

    const ingress = await eventually('the ingress span', async () =>
      spans().find((s) => s.kind === SpanKind.SERVER && s.attributes['http.route'] === '/webhooks/payment'),
    );
    const traceId = ingress.spanContext().traceId;
    expect(ingress.name).to.equal('POST /webhooks/payment');
    expect(ingress.attributes).to.include({ 'svc.service': 'webhooks', 'http.response.status_code': 200 });
    expect(ingress.parentSpanContext, 'the webhook came without a traceparent: the ingress starts the trace').to.equal(undefined);

    // Ready when the last hop, the mailer's SMTP send of the key, has ended in this trace.
    const smtp = await eventually(
      'the SMTP send in the webhook trace',
      async () => inTrace(traceId).find((s) => s.name === 'smtp send'),
      30_000,
    );
    const [mail] = await eventually('the key e-mail', async () => {
      const found = (await mailTo(stack.MAILPIT_URL, sub.email)).filter((m) => /API key/.test(m.Subject));
      return found.length > 0 ? found : undefined;
    });
    const apiKey = /svc_[A-Za-z0-9]{33}/.exec(mail!.Text)?.[0];
    expect(apiKey, 'the key in the e-mail').to.be.a('string');

    // Each hop: a consumer span of its group in this trace, the child of the producer span whose
    // traceparent its record carried.
    const billing = consumerIn(traceId, 'billing');
    const issuer = consumerIn(traceId, 'issuer').filter((s) => s.attributes['svc.event.type'] === 'subscription.created');
    const keysProjection = consumerIn(traceId, 'projection.keys').filter((s) => s.attributes['svc.event.type'] === 'key.generated');
    const mailer = consumerIn(traceId, 'mailer').filter((s) => s.attributes['svc.event.type'] === 'key.generated');
    expect(billing, 'billing').to.have.length(1);
    expect(issuer, 'issuer').to.have.length(1);
    expect(keysProjection, 'keys projection').to.have.length(1);
    expect(mailer, 'mailer').to.have.length(1);

    const sentBy = (consumer: ReadableSpan, topic: string): ReadableSpan => {
      const producer = parentOf(consumer);
      expect(producer?.kind, `the parent of ${consumer.name}`).to.equal(SpanKind.PRODUCER);
      expect(producer?.attributes['messaging.destination.name']).to.equal(prefix + topic);
      return producer!;
    };
    expect(parentOf(sentBy(billing[0]!, 'payments.webhooks'))).to.equal(ingress);
    expect(parentOf(sentBy(issuer[0]!, 'subscriptions.events'))).to.equal(billing[0]);
    const keyGenerated = sentBy(keysProjection[0]!, 'keys.events');
    expect(parentOf(keyGenerated)).to.equal(issuer[0]);
    expect(sentBy(mailer[0]!, 'keys.events')).to.equal(keyGenerated);
    expect(parentOf(smtp)).to.equal(mailer[0]);
    expect(smtp.kind).to.equal(SpanKind.CLIENT);
    expect(smtp.attributes['server.address']).to.be.a('string');

    // The consumers' database calls are theirs: the billing decider's read of the subscription.
    const billingReads = inTrace(traceId).filter(
      (s) => s.attributes['db.system.name'] === 'mongodb' && parentOf(s) === billing[0] && s.attributes['db.operation.name'] === 'find',
    );
    expect(billingReads.map((s) => s.attributes['db.collection.name'])).to.include('subscriptions');

    // Nothing secret and no address in a name, an attribute or an event of any span.
    const everything = JSON.stringify(spans().map((s) => [s.name, s.attributes, s.events, s.resource.attributes]));
    for (const [what, value] of Object.entries({
      apiKey: apiKey!,
      email: sub.email,
      signingSecret: SIGNING_SECRET,
      sharedSecret: SHARED_SECRET,
      encryptionKey: KEY_ENCRYPTION_KEY,
    })) {
      expect(everything.includes(value), `${what} in a span`).to.equal(false);
    }
  });

  it('answers POST /validate on its lean path without a span, while the keys face traces the routes Express answers', async () => {
    const before = spans().length;
    const validate = await fetch(`http://127.0.0.1:${ports.keys}/validate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiKey: `svc_${'A'.repeat(33)}` }),
    });
    expect(validate.status).to.equal(200);
    // A barrier on the same face: a route Express answers, whose span ends as it is answered.
    const marker = `/no-such-route-${randomUUID()}`;
    expect((await fetch(`http://127.0.0.1:${ports.keys}${marker}`)).status).to.equal(404);
    await eventually('the traced 404', async () =>
      spans()
        .slice(before)
        .find(
          (s) => s.kind === SpanKind.SERVER && s.attributes['svc.service'] === 'keys' && s.attributes['http.response.status_code'] === 404,
        ),
    );
    const server = spans()
      .slice(before)
      .filter((s) => s.kind === SpanKind.SERVER);
    expect(server.map((s) => s.name)).to.deep.equal(['GET']);
    expect(JSON.stringify(server.map((s) => s.attributes))).not.to.include(marker);
  });
});
