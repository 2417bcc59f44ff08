import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Admin, Kafka } from 'kafkajs';
import type { Component } from '../../../deploy/local/stack.ts';
import { EventCodec } from '../../../events/codec.ts';
import { ConsumerRunner } from '../../../events/consumer.ts';
import type { DeliveredEvent } from '../../../events/envelope.ts';
import { createKafka } from '../../../events/kafka.ts';
import { EventPublisher } from '../../../events/publisher.ts';
import { ensureTopics } from '../../../events/topics.ts';
import { eventually, testLogger } from '../../support/env.ts';
import { probeCatalog, recorded, uniqueTopic } from '../../support/probe.ts';
import { STACK_TIMEOUT_MS, currentStack, useStack } from '../../support/stack.ts';

/**
 * A broker outage long enough for kafkajs to give up on finding the group coordinator, which it
 * treats as non-retriable: the consumer must come back by itself, not sit dead in a live process.
 */
describe('a consumer across a Kafka outage (integration)', function () {
  this.timeout(240_000);
  let kafka: Kafka;
  let admin: Admin;
  let kafkaServer: Component;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    const env = await useStack();
    try {
      kafkaServer = (await currentStack()).component('kafka');
    } catch {
      this.skip(); // an external Kafka was given: the test does not stop other people's brokers
    }
    kafka = createKafka({ brokers: [env.KAFKA_BROKERS], clientId: 'outage-test' }, testLogger());
    admin = kafka.admin();
    await admin.connect();
  });

  after(async () => {
    await admin?.disconnect().catch(() => undefined);
  });

  it('handles events published after a 20 s outage, whatever kafkajs decided meanwhile, and says so in its health', async () => {
    const topic = uniqueTopic('outage');
    await ensureTopics(admin, [topic], { partitions: 1, replicationFactor: 1 });
    const codec = new EventCodec(probeCatalog(topic));
    const publisher = new EventPublisher(kafka, codec, { timeoutMs: 5000 });
    const seen: DeliveredEvent[] = [];
    const runner = new ConsumerRunner({
      kafka,
      codec,
      publisher,
      log: testLogger(),
      groupId: `outage-${randomUUID()}`,
      topics: [topic],
      sessionTimeoutMs: 10_000,
      backoff: { initialMs: 200, maxMs: 2000 },
      handler: { handle: async (events) => void seen.push(...events) },
    });
    await runner.start();
    try {
      await publisher.publish(recorded('before', 1));
      await eventually('the event before the outage', async () => (seen.length === 1 ? true : undefined), 30_000);

      await kafkaServer.stop();
      const states = new Set<string>();
      const down = Date.now();
      await eventually(
        '20 s of outage',
        async () => {
          states.add(runner.health().state);
          return Date.now() - down > 20_000 ? true : undefined;
        },
        30_000,
      );
      expect(
        [...states].some((s) => s !== 'joined'),
        `health during the outage: ${[...states].join(', ')}`,
      ).to.equal(true);
      await kafkaServer.start();

      await eventually(
        'a publish after the outage',
        async () =>
          await publisher.publish(recorded('after', 2)).then(
            () => true,
            () => undefined,
          ),
        60_000,
      );
      await eventually(
        'the event after the outage',
        async () => (seen.some((e) => (e.data as { probeId: string }).probeId === 'after') ? true : undefined),
        90_000,
      );
      expect(runner.health()).to.deep.include({ ok: true, state: 'joined' });
    } finally {
      await runner.stop();
      await publisher.disconnect();
    }
  });
});
