import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Kafka } from 'kafkajs';
import type { Db } from 'mongodb';
import type { EventCodec } from '../../../events/codec.ts';
import { ConsumerRunner, eachEvent } from '../../../events/consumer.ts';
import type { DeliveredEvent } from '../../../events/envelope.ts';
import { createKafka } from '../../../events/kafka.ts';
import { Outbox } from '../../../events/outbox.ts';
import { EventPublisher } from '../../../events/publisher.ts';
import { ensureTopics } from '../../../events/topics.ts';
import { connectMongo, type MongoHandle } from '../../../services/platform/mongo.ts';
import { eventually, testLogger } from '../../support/env.ts';
import { probeCatalog, recorded, uniqueTopic } from '../../support/probe.ts';
import { registeredCodec } from '../../support/registered-codec.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';

const log = testLogger();

describe('single-document outbox (integration)', () => {
  let kafka: Kafka;
  let mongo: MongoHandle;
  let db: Db;
  let topic: string;
  let codec: EventCodec;
  let publisher: EventPublisher;
  let runner: ConsumerRunner;
  const received: DeliveredEvent[] = [];

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    const env = await useStack();
    kafka = createKafka({ brokers: [env.KAFKA_BROKERS], clientId: 'outbox-test' }, log);
    mongo = await connectMongo(env.MONGODB_URI, `test_${randomUUID().slice(0, 8)}`);
    db = mongo.db;
    topic = uniqueTopic('outbox');
    const admin = kafka.admin();
    await admin.connect();
    await ensureTopics(admin, [topic], { partitions: 1, replicationFactor: 1 });
    await admin.disconnect();
    codec = await registeredCodec(probeCatalog(topic), env);
    publisher = new EventPublisher(kafka, codec, { timeoutMs: 5000 });
    runner = new ConsumerRunner({
      kafka,
      codec,
      publisher,
      log,
      groupId: `outbox-${randomUUID()}`,
      topics: [topic],
      handler: eachEvent(async (e) => void received.push(e)),
    });
    await runner.start();
    await db.collection('claims').createIndex({ email: 1 }, { unique: true });
  });

  after(async () => {
    await runner?.stop();
    await publisher?.disconnect();
    await db?.dropDatabase().catch(() => undefined);
    await mongo?.client.close();
  });

  it('claims and publishes together, and refuses a second claim of the same key', async () => {
    const outbox = new Outbox(db.collection('claims'), codec, publisher, log);
    const event = recorded('claim-1', 1);
    const result = await outbox.claim({ _id: 'claim-1', email: 'a@example.test' }, [event]);
    expect(result.status).to.equal('published');
    const delivered = await eventually('the claimed event', async () =>
      received.find((e) => e.metadata.eventId === event.metadata.eventId),
    );
    expect(result.status === 'published' && result.positions).to.deep.equal([delivered.position]);
    const stored = await db.collection('claims').findOne({ _id: 'claim-1' as never });
    expect(stored?.outbox.pending).to.equal(false);
    expect(stored?.outbox.messages).to.equal(undefined);
    try {
      await outbox.claim({ _id: 'claim-2', email: 'a@example.test' }, [recorded('claim-2', 1)]);
      expect.fail('a duplicate claim must be refused');
    } catch (err) {
      expect((err as { code?: number }).code).to.equal(11000);
    }
    expect(await db.collection('claims').countDocuments({ email: 'a@example.test' })).to.equal(1);
  });

  it('leaves a claim pending when Kafka is unreachable, and the relay publishes it exactly once', async () => {
    const deadKafka = createKafka({ brokers: ['127.0.0.1:1'], clientId: 'outbox-dead' }, log);
    const deadPublisher = new EventPublisher(deadKafka, codec, { timeoutMs: 500 });
    const broken = new Outbox(db.collection('claims'), codec, deadPublisher, log);
    const event = recorded('claim-3', 1);
    expect(await broken.claim({ _id: 'claim-3', email: 'c@example.test' }, [event])).to.deep.equal({ status: 'pending' });
    await deadPublisher.disconnect().catch(() => undefined);

    const outbox = new Outbox(db.collection('claims'), codec, publisher, log);
    expect(await outbox.relayOnce(60_000), 'not before the grace period').to.equal(0);
    expect(await outbox.relayOnce(0)).to.equal(1);
    expect(await outbox.relayOnce(0), 'nothing left').to.equal(0);
    await eventually('the relayed event', async () => received.find((e) => e.metadata.eventId === event.metadata.eventId));
    const copies = received.filter((e) => e.metadata.eventId === event.metadata.eventId);
    expect(copies).to.have.length(1);
    expect(copies[0]!.data).to.deep.equal({ ...event.data, weight: 1 });
    const stored = await db.collection('claims').findOne({ _id: 'claim-3' as never });
    expect(stored?.outbox.attempts).to.equal(1);
  });
});
