import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Admin, Kafka } from 'kafkajs';
import { EventCodec } from '../../../events/codec.ts';
import { ConsumerRunner } from '../../../events/consumer.ts';
import type { DeliveredEvent, Event } from '../../../events/envelope.ts';
import { TransientError } from '../../../events/errors.ts';
import { createKafka } from '../../../events/kafka.ts';
import { EventPublisher } from '../../../events/publisher.ts';
import { loadPolicy } from '../../../events/schema-compatibility.ts';
import { ensureTopics } from '../../../events/topics.ts';
import type { StackEnv } from '../../../deploy/local/stack.ts';
import { eventually, testLogger } from '../../support/env.ts';
import { probeCatalog, recorded, uniqueTopic } from '../../support/probe.ts';
import { registryOf } from '../../support/registered-codec.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';

type RawMessage = Parameters<EventCodec['decode']>[0];

/**
 * A codec whose decode fails a set number of times with an error our runner calls transient (so it
 * leaves the batch to kafkajs, dead-lettering nothing) and kafkajs calls non-retriable: kafkajs
 * then gives the consumer up for good, as it does on "Failed to find group coordinator" during a
 * broker restart (npm run faults, 2026-12-07), which no test can provoke on cue.
 */
class GivenUpOn extends EventCodec {
  failures: number;
  constructor(codec: ConstructorParameters<typeof EventCodec>, failures: number) {
    super(...codec);
    this.failures = failures;
  }
  override decode(message: RawMessage): Event {
    if (this.failures > 0) {
      this.failures--;
      throw Object.assign(new TransientError('the consumer is given up on'), { retriable: false });
    }
    return super.decode(message);
  }
}

describe('a consumer kafkajs gives up on (integration)', function () {
  this.timeout(120_000);
  let env: StackEnv;
  let kafka: Kafka;
  let admin: Admin;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    env = await useStack();
    kafka = createKafka({ brokers: [env.KAFKA_BROKERS], clientId: 'crash-test' }, testLogger());
    admin = kafka.admin();
    await admin.connect();
  });

  after(async () => {
    await admin?.disconnect().catch(() => undefined);
  });

  it('is started again by its runner, with backoff, and handles the event it crashed on and those after it', async () => {
    const topic = uniqueTopic('crash');
    await ensureTopics(admin, [topic], { partitions: 1, replicationFactor: 1 });
    const catalog = probeCatalog(topic);
    const registry = registryOf(env);
    await registry.register(catalog, loadPolicy(catalog.schemasDir));
    const codec = new GivenUpOn([catalog, registry], 0);
    await codec.warm();
    const publisher = new EventPublisher(kafka, codec, { timeoutMs: 5000 });
    const seen: DeliveredEvent[] = [];
    // Delivery is at least once: what was handled but not committed yet comes again after a restart.
    const handled = () => [...new Set(seen.map((e) => (e.data as { probeId: string }).probeId))];
    const has = (probeId: string) => async () => (handled().includes(probeId) ? true : undefined);
    const runner = new ConsumerRunner({
      kafka,
      codec,
      publisher,
      log: testLogger(),
      groupId: `crash-${randomUUID()}`,
      topics: [topic],
      sessionTimeoutMs: 10_000,
      backoff: { initialMs: 100, maxMs: 1000 },
      handler: { handle: async (events) => void seen.push(...events) },
    });
    const crashes: boolean[] = [];
    runner.on(runner.events.CRASH, ({ payload }) => crashes.push(payload.restart));
    const states = new Set<string>();
    const watch = setInterval(() => states.add(runner.health().state), 5);
    await runner.start();
    try {
      await publisher.publish(recorded('before', 1));
      await eventually('the event before the crash', has('before'), 30_000);

      // Twice: the consumer the runner started again is given up on too, and is started again.
      codec.failures = 2;
      await publisher.publish(recorded('crashed-on', 2));
      await eventually('the event the consumer crashed on', has('crashed-on'), 60_000);
      expect(crashes, 'kafkajs gave the consumer up twice, restarting it neither time').to.deep.equal([false, false]);
      expect([...states]).to.include.members(['crashed', 'restarting']);

      await publisher.publish(recorded('after', 3));
      await eventually('the event after the crash', has('after'), 30_000);
      expect(handled()).to.deep.equal(['before', 'crashed-on', 'after']);
      expect(runner.health()).to.deep.include({ ok: true, state: 'joined' });
    } finally {
      clearInterval(watch);
      await runner.stop();
      await publisher.disconnect();
    }
  });
});
