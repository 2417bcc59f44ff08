import { createHash, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { freePort } from '../../deploy/local/processes.ts';
import { ConsumerRunner } from '../../events/consumer.ts';
import type { DeliveredEvent } from '../../events/envelope.ts';
import { PAYMENT_WEBHOOKS_TOPIC, type PaymentWebhookReceived } from '../../services/billing/events.ts';
import { billingMetrics } from '../../services/billing/metrics.ts';
import { webhookIngressService } from '../../services/billing/webhook-ingress.service.ts';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { eventually, testEnv, testLogger } from '../support/env.ts';
import { deliver, fixture, sign, subscriptionPayload, toBody, type Delivery } from '../support/lemonsqueezy.ts';
import { STACK_TIMEOUT_MS, useStack, ownKafka } from '../support/stack.ts';
import { useContractCheck } from '../support/contract-check.ts';

const SECRET = 'e2e-payment-webhook-secret-0123456789';

describe('payment webhook ingress: verify, record in Kafka (e2e)', function () {
  this.timeout(60_000);
  let platform: RunningPlatform;
  let base: string;
  let consumer: ConsumerRunner;
  /** payments.webhooks in this test's namespace (testEnv gives each test a topic prefix). */
  let topic: string;
  const received: DeliveredEvent[] = [];

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    const stack = await useStack();
    const port = await freePort();
    platform = await startServices(
      [webhookIngressService],
      testEnv(stack, { WEBHOOKS_PORT: String(port), PAYMENT_WEBHOOK_SECRET: SECRET, HTTP_BODY_LIMIT: '64kb' }),
      testLogger(),
    );
    base = `http://127.0.0.1:${port}`;
    const rt = platform.runtime;
    topic = rt.catalog.topicOf('payment.webhook-received');
    expect(topic.endsWith(PAYMENT_WEBHOOKS_TOPIC)).to.equal(true);
    // Reads the topic as billing will: the runtime's catalog and codec, a group of its own.
    consumer = new ConsumerRunner({
      kafka: rt.kafka,
      codec: rt.codec,
      publisher: rt.publisher,
      log: rt.log,
      groupId: rt.groupId(`webhooks-e2e-${randomUUID()}`),
      topics: [topic],
      handler: { handle: async (events) => void received.push(...events) },
    });
    await consumer.start();
  });

  after(async () => {
    await consumer?.stop();
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
  });

  // Every answer of this spec, checked against the answering face's OpenAPI document.
  useContractCheck();

  /** Each test tags its requests with a request id of its own and finds its records by it (the correlation id). */
  const requestId = () => `wh-e2e-${randomUUID()}`;
  const recorded = (correlationId: string, timeoutMs = 30_000) =>
    eventually(
      `the webhook recorded with correlation ${correlationId}`,
      async () => {
        const found = received.filter(
          (e): e is DeliveredEvent<PaymentWebhookReceived> =>
            e.type === 'payment.webhook-received' && e.metadata.correlationId === correlationId,
        );
        return found.length > 0 ? found : undefined;
      },
      timeoutMs,
    );
  const highWatermark = async () => (await platform.runtime.admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + BigInt(p.high), 0n);

  /** A refused delivery: its status and code, nothing on the topic, no secret or signature in the answer. */
  async function expectRefused(send: () => Promise<Delivery>, status: number, code: string, signature?: string): Promise<Delivery> {
    const before = await highWatermark();
    const res = await send();
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    expect(res.body.code).to.equal(code);
    expect(res.body.error).to.be.a('string');
    const answer = JSON.stringify(res.body) + JSON.stringify([...res.headers]);
    expect(answer).not.to.include(SECRET);
    expect(answer).not.to.include(sign(SECRET, res.sent));
    if (signature) expect(answer).not.to.include(signature);
    // The ingress answers only after a publish resolved, so a record would already be visible.
    expect(await highWatermark()).to.equal(before);
    return res;
  }

  describe('accepted', () => {
    it('records the signed sample subscription_created as one payment.webhook-received and answers 200', async () => {
      const { raw } = fixture('subscription_created');
      const id = requestId();
      const startedAt = Date.now();
      const counted = billingMetrics.webhooks.value({ type: 'subscription_created', outcome: 'recorded' });
      const res = await deliver(base, SECRET, raw, { headers: { 'x-request-id': id, 'x-event-name': 'subscription_created' } });
      expect(res.status).to.equal(200);
      expect(billingMetrics.webhooks.value({ type: 'subscription_created', outcome: 'recorded' })).to.equal(counted + 1);
      expect(res.body).to.deep.equal({ received: true });
      expect(res.headers.get('x-request-id')).to.equal(id);
      const [event, ...more] = await recorded(id);
      expect(more).to.have.length(0);
      expect(event!.data).to.include({
        webhookId: '7c1f6a2e-4b0e-4a8e-9a43-2f7d6b8c1e90',
        eventName: 'subscription_created',
        subscriptionId: '184220',
        body: raw.toString('utf8'),
      });
      expect(event!.data.receivedAt.getTime()).to.be.within(startedAt - 1000, Date.now());
      expect(event!.metadata.causationId).to.equal(null);
      expect(event!.position.topic).to.equal(topic);
    });

    it('records an invoice under its subscription (attributes.subscription_id)', async () => {
      const { raw } = fixture('subscription_payment_success');
      const id = requestId();
      expect((await deliver(base, SECRET, raw, { headers: { 'x-request-id': id } })).status).to.equal(200);
      const [event] = await recorded(id);
      expect(event!.data).to.include({
        webhookId: '0b8d2f51-93c4-4a51-8e0e-5c1a7f3d9e22',
        eventName: 'subscription_payment_success',
        subscriptionId: '184220',
      });
    });

    it('uses the SHA-256 of the raw body as webhook id when meta.webhook_id is absent', async () => {
      const id = requestId();
      const res = await deliver(base, SECRET, subscriptionPayload('subscription_cancelled', { webhookId: null, subscriptionId: 9001 }), {
        headers: { 'x-request-id': id },
      });
      expect(res.status).to.equal(200);
      const [event] = await recorded(id);
      expect(event!.data).to.include({
        webhookId: createHash('sha256').update(res.sent).digest('hex'),
        eventName: 'subscription_cancelled',
        subscriptionId: '9001',
      });
    });

    it('reads the raw body whatever the content type says, even none', async () => {
      const id = requestId();
      const res = await deliver(base, SECRET, subscriptionPayload('subscription_updated'), {
        headers: { 'x-request-id': id, 'content-type': null },
      });
      expect(res.status).to.equal(200);
      expect((await recorded(id))[0]!.data.body).to.equal(res.sent.toString('utf8'));
    });

    it('answers 200 with ignored: true for an event billing does not act on, and still records it', async () => {
      const id = requestId();
      const order = {
        meta: { event_name: 'order_created', webhook_id: randomUUID() },
        data: { type: 'orders', id: '4109823', attributes: { status: 'paid' } },
      };
      const counted = billingMetrics.webhooks.value({ type: 'other', outcome: 'ignored' });
      const res = await deliver(base, SECRET, order, { headers: { 'x-request-id': id } });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ received: true, ignored: true });
      // The provider's event name is free text: a name billing does not know is counted as "other".
      expect(billingMetrics.webhooks.value({ type: 'other', outcome: 'ignored' })).to.equal(counted + 1);
      const [event] = await recorded(id);
      expect(event!.data).to.include({ webhookId: order.meta.webhook_id, eventName: 'order_created', subscriptionId: null });
    });

    it('reports healthy on /health, checking Kafka only (it needs nothing else)', async () => {
      const res = await fetch(`${base}/health`);
      const body = (await res.json()) as { service: string; status: string; checks: Record<string, unknown> };
      expect(res.status).to.equal(200);
      expect(body.service).to.equal('webhooks');
      expect(Object.keys(body.checks)).to.deep.equal(['kafka']);
    });
  });

  describe('signed but unusable: recorded anyway (billing dead-letters it; the provider must not give up on it)', () => {
    const recordedAs = async (body: Buffer | string | ReturnType<typeof subscriptionPayload>) => {
      const id = requestId();
      const res = await deliver(base, SECRET, body, { headers: { 'x-request-id': id } });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const [event] = await recorded(id);
      return { res, event: event! };
    };

    it('a body that is not JSON: recorded as sent, under the SHA-256 of its bytes', async () => {
      const text = '{"meta": {"event_name": "subscription_created"';
      const { event } = await recordedAs(text);
      expect(event.data).to.include({
        body: text,
        eventName: '(unreadable)',
        webhookId: createHash('sha256').update(text).digest('hex'),
        subscriptionId: null,
      });
    });

    it('a body that is not UTF-8', async () => {
      const { event } = await recordedAs(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]));
      expect(event.data.eventName).to.equal('(unreadable)');
    });

    it('a body without meta.event_name keeps its subscription id, so it stays in order with that subscription', async () => {
      const body = subscriptionPayload('subscription_created', { subscriptionId: 777001 });
      delete body.meta.event_name;
      const { event } = await recordedAs(body);
      expect(event.data).to.include({ eventName: '(unreadable)', subscriptionId: '777001' });
    });

    it('a subscription event of an unexpected shape (ends_at "garbage", a string variant_id) is recorded byte for byte', async () => {
      const body = subscriptionPayload('subscription_cancelled', { attributes: { ends_at: 'garbage', variant_id: 'not-a-number' } });
      const { res, event } = await recordedAs(body);
      expect(res.body).to.deep.equal({ received: true });
      expect(event.data.body).to.equal(JSON.stringify(body));
      expect(event.data.eventName).to.equal('subscription_cancelled');
    });
  });

  describe('refused, with nothing published', () => {
    const payload = () => subscriptionPayload('subscription_created');

    it('401 for a signature made with another secret', async () => {
      const body = payload();
      const signature = sign('another-secret-0123456789abcdef', Buffer.from(JSON.stringify(body)));
      const counted = billingMetrics.webhooks.value({ type: 'unknown', outcome: 'bad_signature' });
      const res = await expectRefused(() => deliver(base, SECRET, body, { signature }), 401, 'UNAUTHORIZED', signature);
      expect(res.body.error).to.equal('invalid signature');
      expect(billingMetrics.webhooks.value({ type: 'unknown', outcome: 'bad_signature' })).to.equal(counted + 1);
    });

    it('401 for a valid signature of other bytes (a body altered in transit)', async () => {
      const signed = Buffer.from(JSON.stringify(payload()));
      const signature = sign(SECRET, signed);
      const altered = Buffer.from(signed.toString('utf8').replace('ada@example.com', 'eve@example.com'));
      await expectRefused(() => deliver(base, SECRET, altered, { signature }), 401, 'UNAUTHORIZED', signature);
    });

    it('401 without an X-Signature header', async () => {
      const res = await expectRefused(() => deliver(base, SECRET, payload(), { signature: null }), 401, 'UNAUTHORIZED');
      expect(res.body.error).to.equal('missing X-Signature header');
    });

    it('401 for a malformed X-Signature header', async () => {
      await expectRefused(() => deliver(base, SECRET, payload(), { signature: 'not-hex-at-all' }), 401, 'UNAUTHORIZED');
    });

    it('413 for a body over HTTP_BODY_LIMIT, even correctly signed', async () => {
      const big = subscriptionPayload('subscription_updated', { attributes: { padding: 'x'.repeat(80 * 1024) } });
      const res = await expectRefused(() => deliver(base, SECRET, big), 413, 'PAYLOAD_TOO_LARGE');
      expect(res.body.error).to.equal('request body is too large');
    });
  });

  // Last: it stops the shared broker.
  describe('a Kafka outage', () => {
    it('answers 503 with Retry-After while Kafka is down, and 200 to the provider’s retry once it is back', async function () {
      this.timeout(180_000);
      const kafka = await ownKafka(this);
      const payload = subscriptionPayload('subscription_updated');
      const bytes = toBody(payload);
      await kafka.stop();
      try {
        const down = await deliver(base, SECRET, bytes, { headers: { 'x-request-id': requestId() } });
        expect(down.status).to.equal(503);
        expect(down.body.code).to.equal('UNAVAILABLE');
        expect(down.headers.get('retry-after')).to.equal('5');
        expect(JSON.stringify(down.body)).not.to.include(SECRET);
      } finally {
        await kafka.start();
      }
      const id = requestId();
      // The provider retries the same delivery (same bytes, same signature) until it gets a 2xx.
      await eventually(
        'a 200 for the retried webhook',
        async () => {
          const res = await deliver(base, SECRET, bytes, { headers: { 'x-request-id': id } });
          return res.status === 200 ? res : undefined;
        },
        60_000,
      );
      const [event] = await recorded(id, 90_000);
      expect(event!.data).to.include({
        webhookId: payload.meta.webhook_id as string,
        eventName: 'subscription_updated',
        subscriptionId: '184220',
      });
    });
  });
});
