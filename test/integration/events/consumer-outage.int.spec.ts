import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Admin, Kafka } from 'kafkajs';
import type { Document } from 'mongodb';
import type { Component } from '../../../deploy/local/stack.ts';
import { projectionCollection } from '../../../events/collections.ts';
import { ConsumerRunner } from '../../../events/consumer.ts';
import type { DeliveredEvent } from '../../../events/envelope.ts';
import { createKafka } from '../../../events/kafka.ts';
import { ProjectionApplier } from '../../../events/projection.ts';
import { EventPublisher } from '../../../events/publisher.ts';
import { replayProjection } from '../../../events/replay.ts';
import { ensureTopics } from '../../../events/topics.ts';
import { connectMongo, type MongoHandle } from '../../../services/platform/mongo.ts';
import { eventually, testLogger } from '../../support/env.ts';
import { counterProjection, probeCatalog, recorded, uniqueTopic } from '../../support/probe.ts';
import { registeredCodec } from '../../support/registered-codec.ts';
import type { StackEnv } from '../../../deploy/local/stack.ts';
import { STACK_TIMEOUT_MS, useStack, ownKafka } from '../../support/stack.ts';

/**
 * Broker outages longer than the client's own retries: a consumer must come back by itself, not sit
 * dead in a live process, and as the same group member, not a new one the broker makes wait.
 */
describe('a consumer across a Kafka outage (integration)', function () {
  this.timeout(240_000);
  let kafka: Kafka;
  let admin: Admin;
  let kafkaServer: Component;
  let mongo: MongoHandle | undefined;
  let env: StackEnv;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    env = await useStack();
    kafkaServer = await ownKafka(this);
    kafka = createKafka({ brokers: [env.KAFKA_BROKERS], clientId: 'outage-test' }, testLogger());
    admin = kafka.admin();
    await admin.connect();
    mongo = await connectMongo(env.MONGODB_URI, `test_${randomUUID().slice(0, 8)}`);
  });

  after(async () => {
    await admin?.disconnect().catch(() => undefined);
    await mongo?.db.dropDatabase().catch(() => undefined);
    await mongo?.client.close();
  });

  it('handles events published after a 20 s outage, whatever kafkajs decided meanwhile, and says so in its health', async () => {
    const topic = uniqueTopic('outage');
    await ensureTopics(admin, [topic], { partitions: 1, replicationFactor: 1 });
    const codec = await registeredCodec(probeCatalog(topic), env);
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
          const health = runner.health();
          states.add(health.ok ? 'ok' : `${health.state}: ${health.problem}`);
          return Date.now() - down > 20_000 ? true : undefined;
        },
        30_000,
      );
      expect(
        [...states].some((s) => s !== 'ok'),
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

  /**
   * The accounts spec's flake (its users projection not at the upgrade within 20 s after the spec
   * restarted Kafka): a member whose client gave up during the outage came back under a new member
   * id, and the broker, which reloads the old member with the group, held the new one's join until
   * the old one's session expired. Idle members gave up first. Every projection, busy or idle through
   * the outage, must be back within half a session of the broker and equal to its replay.
   */
  it('keeps every member in its group across an outage longer than the client retries: projections, busy and idle, catch up within half a session and equal their replay', async () => {
    const sessionTimeoutMs = 30_000;
    const busy = uniqueTopic('outage-busy');
    const quiet = uniqueTopic('outage-quiet');
    await ensureTopics(admin, [busy, quiet], { partitions: 3, replicationFactor: 1 });
    // A catalog, codec and publisher per topic: the probe events name one topic each.
    const lane = async (topic: string) => {
      const catalog = probeCatalog(topic);
      const codec = await registeredCodec(catalog, env);
      return { topic, catalog, codec, publisher: new EventPublisher(kafka, codec, { timeoutMs: 2000 }) };
    };
    const lanes = { busy: await lane(busy), quiet: await lane(quiet) };
    const db = mongo!.db;
    const member = (on: (typeof lanes)['busy'], name: string) => {
      const projection = counterProjection(`outage_${name}_${randomUUID().slice(0, 8)}`);
      const runner = new ConsumerRunner({
        kafka,
        codec: on.codec,
        publisher: on.publisher,
        log: testLogger(),
        groupId: `outage-${projection.collection}`,
        topics: [on.topic],
        sessionTimeoutMs,
        handler: new ProjectionApplier(db, projection),
      });
      return { lane: on, projection, runner };
    };
    const members = [member(lanes.busy, 'busy1'), member(lanes.busy, 'busy2'), member(lanes.quiet, 'quiet')];
    for (const m of members) await m.runner.start();
    const has = async (m: (typeof members)[number], probeId: string) =>
      (await (await projectionCollection(db, m.projection.collection)).findOne({ _id: probeId } as Document)) !== null;
    /**
     * The load's seqs in the order the topic holds them, per partition, read from the start by a group of
     * its own until `last` has been seen on `partitions` partitions (each record once, by its offset).
     */
    const readLog = async (on: (typeof lanes)['busy'], last: (probeId: string) => boolean, partitions: number) => {
      const records = new Map<number, Map<string, { probeId: string; seq: number }>>();
      const reader = new ConsumerRunner({
        kafka,
        codec: on.codec,
        publisher: on.publisher,
        log: testLogger(),
        groupId: `outage-log-${randomUUID()}`,
        topics: [on.topic],
        commitOffsets: false,
        handler: {
          handle: async (events) => {
            for (const e of events) {
              const { probeId, seq } = e.data as { probeId: string; seq: number };
              const byOffset = records.get(e.position.partition) ?? new Map<string, { probeId: string; seq: number }>();
              byOffset.set(e.position.offset, { probeId, seq });
              records.set(e.position.partition, byOffset);
            }
          },
        },
      });
      await reader.start();
      try {
        await eventually('the busy topic read to its markers', async () => {
          const done = [...records.values()].filter((byOffset) => [...byOffset.values()].some((r) => last(r.probeId)));
          return done.length === partitions ? true : undefined;
        });
      } finally {
        await reader.stop();
      }
      return new Map(
        [...records].map(([partition, byOffset]) => [
          partition,
          [...byOffset]
            .sort(([a], [b]) => (BigInt(a) < BigInt(b) ? -1 : 1))
            .filter(([, r]) => r.probeId.startsWith('probe-'))
            .map(([, r]) => r.seq),
        ]),
      );
    };
    /** One event on each partition of the topic; their probe ids. */
    const markers = async (on: (typeof lanes)['busy'], what: string) => {
      const byPartition = new Map<number, string>();
      for (let i = 0; byPartition.size < 3; i++) {
        const [position] = await on.publisher.publishOrdered([recorded(`${what}-${i}`, 0)]);
        if (!byPartition.has(position!.partition)) byPartition.set(position!.partition, `${what}-${i}`);
      }
      return [...byPartition.values()];
    };
    // Load on the busy topic throughout: one event at a time; one the broker did not acknowledge is
    // sent again (the first may still land, at another offset: a re-publish the projections skip).
    let loading = true;
    let acknowledged = 0;
    const load = (async () => {
      for (let seq = 0; loading; seq++) {
        const event = recorded(`probe-${seq % 12}`, seq);
        while (
          loading &&
          !(await lanes.busy.publisher.publish(event).then(
            () => true,
            () => false,
          ))
        );
        acknowledged++;
      }
    })();
    try {
      const before = await markers(lanes.quiet, 'quiet-before');
      await eventually('every projection applying', async () => {
        const ready = await Promise.all([
          ...members.slice(0, 2).map((m) => has(m, 'probe-11')),
          ...before.map((id) => has(members[2]!, id)),
        ]);
        return ready.every(Boolean) ? true : undefined;
      });

      // Longer than the client's retries (about 9 s).
      await kafkaServer.stop();
      const down = Date.now();
      const health = new Set<string>();
      await eventually(
        '15 s of outage',
        async () => {
          for (const m of members) health.add(m.runner.health().ok ? 'ok' : 'not ok');
          return Date.now() - down > 15_000 ? true : undefined;
        },
        30_000,
      );
      await kafkaServer.start();
      const back = Date.now();
      const acknowledgedBefore = acknowledged;
      await eventually('the load acknowledged again', async () => (acknowledged > acknowledgedBefore + 50 ? true : undefined), 60_000);
      loading = false;
      await load;
      const expected = [
        ...(await markers(lanes.busy, 'busy-after')).flatMap((id) => members.slice(0, 2).map((m) => [m, id] as const)),
        ...(await markers(lanes.quiet, 'quiet-after')).map((id) => [members[2]!, id] as const),
      ];
      await eventually(
        'every projection at the markers published after the outage',
        async () => ((await Promise.all(expected.map(([m, id]) => has(m, id)))).every(Boolean) ? true : undefined),
        sessionTimeoutMs / 2 - (Date.now() - back),
      );
      expect([...health], 'the members said so in their health during the outage').to.include('not ok');

      // The load publishes one event at a time, so on each partition its events must follow one another in
      // publish order: a copy of an abandoned send appended after a later event can be too late for the
      // projections' re-publish guard, which only looks back over a document's last events.
      const log = await readLog(lanes.busy, (probeId) => probeId.startsWith('busy-after'), 3);
      for (const [partition, seqs] of log) {
        const late = seqs.findIndex((seq, i) => i > 0 && seq < seqs[i - 1]!);
        expect(late, `partition ${partition}: seq ${seqs[late]} appended after seq ${seqs[late - 1]}`).to.equal(-1);
      }

      for (const { projection, lane: on } of members) {
        const { catalog, codec, publisher } = on;
        // Replayed into a collection of its own, so the live one is compared with it, not replaced by it.
        const copy = counterProjection(`${projection.collection}_replay`);
        await replayProjection({ kafka, codec, catalog, publisher, db, projection: copy, log: testLogger() });
        const rebuilt = await (await projectionCollection(db, copy.collection)).find().sort({ _id: 1 }).toArray();
        const live = async () => (await projectionCollection(db, projection.collection)).find().sort({ _id: 1 }).toArray();
        // A publish the broker acknowledged late (its retry already counted) can land after the markers:
        // the live projection applies it a moment later, as the replay did.
        await eventually(
          `${projection.collection} equal to its replay`,
          async () => (JSON.stringify(await live()) === JSON.stringify(rebuilt) ? true : undefined),
          20_000,
        ).catch(() => undefined);
        const applied = await live();
        for (const doc of applied) expect(new Set(doc.seqs).size, `${String(doc._id)}: an event applied twice`).to.equal(doc.seqs.length);
        expect(rebuilt, projection.collection).to.deep.equal(applied);
      }
    } finally {
      loading = false;
      await load;
      for (const m of members) await m.runner.stop();
      for (const on of Object.values(lanes)) await on.publisher.disconnect();
    }
  });
});
