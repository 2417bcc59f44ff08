import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { type Admin, type Kafka, Partitioners } from 'kafkajs';
import { createKafka } from '../../../events/kafka.ts';
import { RepartitionRefused, repartition } from '../../../events/repartition.ts';
import { ensureTopics } from '../../../events/topics.ts';
import { eventually, testLogger } from '../../support/env.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';

const log = testLogger();

/**
 * `svc topics repartition` on the real Kafka: 3 partitions to 12 under a new prefix, per-key order kept in
 * the copy and for what is published after it, every consumer group carried over at the end; refused
 * while a group has members or is behind.
 */
describe('raising the partitions of the event topics (integration)', () => {
  let kafka: Kafka;
  let admin: Admin;
  const from = `t${randomUUID().slice(0, 8)}.`;
  const to = `t${randomUUID().slice(0, 8)}.`;
  const topics = [`${from}orders`, `${from}payments`];
  const KEYS = 24;
  const PER_KEY = 15;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    const env = await useStack();
    kafka = createKafka({ brokers: [env.KAFKA_BROKERS], clientId: 'repartition-test' }, log);
    admin = kafka.admin();
    await admin.connect();
  });

  after(async () => {
    const mine = (await admin.listTopics()).filter((t) => t.startsWith(from) || t.startsWith(to));
    await admin.deleteTopics({ topics: mine }).catch(() => undefined);
    const groups = (await admin.listGroups()).groups.map((g) => g.groupId).filter((g) => g.startsWith(from) || g.startsWith(to));
    await admin.deleteGroups(groups).catch(() => undefined);
    await admin.disconnect();
  });

  /** Every message of a topic, by partition, in log order: [key, seq]. */
  async function readAll(topic: string): Promise<Map<number, [string, number][]>> {
    const offsets = await admin.fetchTopicOffsets(topic);
    const want = new Map(offsets.filter((o) => Number(o.high) > Number(o.low)).map((o) => [o.partition, Number(o.high)]));
    const got = new Map<number, [string, number][]>();
    const consumer = kafka.consumer({ groupId: `reader-${randomUUID()}` });
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    const seen = new Set<number>();
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        const list = got.get(partition) ?? [];
        list.push([String(message.key), Number(String(message.value))]);
        got.set(partition, list);
        if (Number(message.offset) + 1 >= (want.get(partition) ?? 0)) seen.add(partition);
      },
    });
    await eventually(`all of ${topic} read`, async () => (seen.size === want.size ? true : undefined), 60_000);
    await consumer.disconnect();
    return got;
  }

  it('copies 3 partitions into 12 keeping every key in one partition in order, carries the groups over at the end, and refuses a busy log', async function () {
    this.timeout(180_000);
    await ensureTopics(admin, topics, { partitions: 3, replicationFactor: 1 });
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    for (let seq = 1; seq <= PER_KEY; seq++)
      for (const topic of topics)
        await producer.send({
          topic,
          acks: -1,
          messages: Array.from({ length: KEYS }, (_, k) => ({ key: `key-${k}`, value: String(seq) })),
        });

    // A service's group, consumed to the end and committed, then stopped.
    const groupId = `${from}projection-orders`;
    const consumer = kafka.consumer({ groupId });
    await consumer.connect();
    await consumer.subscribe({ topics, fromBeginning: true });
    let handled = 0;
    await consumer.run({ eachMessage: async () => void handled++ });
    await eventually(
      'the group to consume everything',
      async () => (handled === KEYS * PER_KEY * topics.length ? true : undefined),
      60_000,
    );
    const plan = { topics, fromPrefix: from, toPrefix: to, settings: { partitions: 12, replicationFactor: 1 } };

    // Running: refused, naming the group; nothing made.
    const running = await repartition(kafka, admin, plan, log).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(running).to.be.instanceOf(RepartitionRefused);
    expect((running as RepartitionRefused).message).to.match(new RegExp(`group ${groupId.replace('.', '\\.')} has 1 member`));
    await consumer.disconnect();

    // Stopped but behind (a group that stopped early): refused too.
    const behind = `${from}projection-late`;
    await admin.setOffsets({ groupId: behind, topic: topics[0]!, partitions: [{ partition: 0, offset: '0' }] });
    const late = await repartition(kafka, admin, plan, log).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect((late as RepartitionRefused).message).to.match(/projection-late is \d+ event\(s\) behind/);
    expect((await admin.listTopics()).filter((t) => t.startsWith(to))).to.deep.equal([]);
    await admin.deleteGroups([behind]);

    const report = await repartition(kafka, admin, plan, log);
    expect(report.copied).to.deep.equal({ [`${to}orders`]: KEYS * PER_KEY, [`${to}payments`]: KEYS * PER_KEY });
    expect(report.groups).to.deep.equal([`${to}projection-orders`]);
    for (const topic of [`${to}orders`, `${to}payments`]) {
      const meta = await admin.fetchTopicMetadata({ topics: [topic] });
      expect(meta.topics[0]?.partitions).to.have.length(12);
    }

    // What the services publish next, with the publisher's partitioner, lands behind the copies of its key.
    await producer.send({
      topic: `${to}orders`,
      acks: -1,
      messages: Array.from({ length: KEYS }, (_, k) => ({ key: `key-${k}`, value: String(PER_KEY + 1) })),
    });
    await producer.disconnect();
    const copied = await readAll(`${to}orders`);
    expect(copied.size, 'keys spread over more than 3 partitions').to.be.greaterThan(3);
    const partitionOf = new Map<string, number>();
    const seqs = new Map<string, number[]>();
    for (const [partition, messages] of copied)
      for (const [key, seq] of messages) {
        expect(partitionOf.get(key) ?? partition, `${key} in one partition`).to.equal(partition);
        partitionOf.set(key, partition);
        seqs.set(key, [...(seqs.get(key) ?? []), seq]);
      }
    expect(seqs.size).to.equal(KEYS);
    for (const [key, list] of seqs) expect(list, key).to.deep.equal(Array.from({ length: PER_KEY + 1 }, (_, i) => i + 1));

    // The carried-over group stands at the end of the copies: it goes on with the new event only.
    const offsets = await admin.fetchOffsets({ groupId: `${to}projection-orders`, topics: [`${to}orders`, `${to}payments`] });
    const ends = new Map<string, Map<number, string>>();
    for (const t of [`${to}orders`, `${to}payments`])
      ends.set(t, new Map((await admin.fetchTopicOffsets(t)).map((o) => [o.partition, o.high])));
    let behindCopies = 0;
    for (const { topic, partitions } of offsets)
      for (const p of partitions) behindCopies += Number(ends.get(topic)?.get(p.partition) ?? 0) - Number(p.offset);
    expect(behindCopies, 'only the events published after the copy are new to it').to.equal(KEYS);
  });
});
