import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Kafka } from 'kafkajs';
import type { Db, Document } from 'mongodb';
import { type EventCodec, HEADER } from '../../../events/codec.ts';
import { ConsumerRunner, DLQ_HEADER, eachEvent, type EventHandler } from '../../../events/consumer.ts';
import type { DeliveredEvent } from '../../../events/envelope.ts';
import { createKafka } from '../../../events/kafka.ts';
import { projectionCollection } from '../../../events/collections.ts';
import { ProjectionApplier, type Projection } from '../../../events/projection.ts';
import { EventPublisher } from '../../../events/publisher.ts';
import { replayProjection } from '../../../events/replay.ts';
import { dlqTopic, ensureTopics } from '../../../events/topics.ts';
import { connectMongo, type MongoHandle } from '../../../services/platform/mongo.ts';
import type { StackEnv } from '../../../deploy/local/stack.ts';
import { eventually, testLogger } from '../../support/env.ts';
import {
  counterProjection,
  probeCatalog,
  probeCatalogV1,
  recorded,
  uniqueTopic,
  type Counter,
  type ProbeEvent,
} from '../../support/probe.ts';
import { registeredCodec } from '../../support/registered-codec.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';

const log = testLogger();

describe('event backbone with real Kafka and MongoDB (integration)', () => {
  let env: StackEnv;
  let kafka: Kafka;
  let mongo: MongoHandle;
  let db: Db;
  const cleanups: (() => Promise<unknown>)[] = [];

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    env = await useStack();
    kafka = createKafka({ brokers: [env.KAFKA_BROKERS], clientId: 'backbone-test' }, log);
    mongo = await connectMongo(env.MONGODB_URI, `test_${randomUUID().slice(0, 8)}`);
    db = mongo.db;
  });

  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  });

  after(async () => {
    await db?.dropDatabase().catch(() => undefined);
    await mongo?.client.close();
  });

  async function setup(what: string) {
    const topic = uniqueTopic(what);
    const admin = kafka.admin();
    await admin.connect();
    await ensureTopics(admin, [topic], { partitions: 3, replicationFactor: 1 });
    const catalog = probeCatalog(topic);
    const codec = await registeredCodec(catalog, env);
    const publisher = new EventPublisher(kafka, codec, { timeoutMs: 5000 });
    cleanups.push(
      () => publisher.disconnect(),
      () => admin.disconnect(),
    );
    return { topic, catalog, codec, publisher, admin };
  }

  function consume(
    codec: EventCodec,
    publisher: EventPublisher,
    topic: string,
    /** One event at a time, or a handler that sees each chunk whole. */
    handle: ((e: DeliveredEvent) => Promise<void>) | EventHandler,
    groupId = `g-${randomUUID()}`,
    options: { commitIntervalMs?: number; chunkSize?: number } = {},
  ) {
    const runner = new ConsumerRunner({
      kafka,
      codec,
      publisher,
      log,
      groupId,
      topics: [topic],
      handler: typeof handle === 'function' ? eachEvent(handle) : handle,
      retries: 2,
      backoff: { initialMs: 10, maxMs: 50 },
      ...options,
    });
    cleanups.push(() => runner.stop());
    return runner;
  }

  async function readDlq(topic: string, count: number) {
    const got: { headers: Record<string, string>; value: Buffer | null; key: string | undefined }[] = [];
    const consumer = kafka.consumer({ groupId: `dlq-reader-${randomUUID()}` });
    cleanups.push(() => consumer.disconnect());
    await consumer.connect();
    await consumer.subscribe({ topic: dlqTopic(topic), fromBeginning: true });
    const done = new Promise<void>((resolve) => {
      void consumer.run({
        eachMessage: async ({ message }) => {
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(message.headers ?? {})) headers[k] = String(Array.isArray(v) ? v[0] : v);
          got.push({ headers, value: message.value, key: message.key?.toString() });
          if (got.length >= count) resolve();
        },
      });
    });
    await done;
    return got;
  }

  it('publishes a typed event and consumes it with its envelope and position', async () => {
    const { topic, codec, publisher } = await setup('roundtrip');
    const event = recorded('probe-a', 1, 'first');
    const received: DeliveredEvent[] = [];
    const runner = consume(codec, publisher, topic, async (e) => void received.push(e));
    await runner.start();
    await publisher.publish(event);
    const got = await eventually('the event', async () => received[0]);
    expect(got.type).to.equal('probe.recorded');
    expect(got.data).to.deep.equal({ ...event.data, weight: 1 });
    expect(got.metadata).to.deep.equal(event.metadata);
    expect(got.position.topic).to.equal(topic);
  });

  it('reads events written with an older schema version through the current reader', async () => {
    const { topic, codec, publisher } = await setup('evolution');
    const oldWriter = new EventPublisher(kafka, await registeredCodec(probeCatalogV1(topic), env), { timeoutMs: 5000 });
    cleanups.push(() => oldWriter.disconnect());
    await oldWriter.publish(recorded('probe-old', 1, 'written by v1'));
    const received: DeliveredEvent[] = [];
    await consume(codec, publisher, topic, async (e) => void received.push(e)).start();
    const got = await eventually('the v1 event', async () => received[0]);
    expect(got.data).to.deep.equal({ probeId: 'probe-old', seq: 1, note: 'written by v1', weight: 1 });
  });

  it('sends poison and repeatedly failing events to the DLQ with their coordinates, and goes on', async () => {
    const { topic, codec, publisher } = await setup('poison');
    const received: string[] = [];
    let attempts = 0;
    await consume(codec, publisher, topic, async (e) => {
      if ((e.data as { note: string }).note === 'explode') {
        attempts++;
        throw new Error('handler refuses this event');
      }
      received.push((e.data as { note: string }).note);
    }).start();
    const key = 'same-key';
    await publisher.publishRaw([
      {
        topic,
        key,
        value: Buffer.from('not avro at all'),
        headers: { [HEADER.type]: 'probe.recorded', [HEADER.fingerprint]: 'ff'.repeat(32) },
      },
    ]);
    await publisher.publish([recorded(key, 1, 'explode'), recorded(key, 2, 'after')]);
    await eventually('the event after the poison', async () => (received.includes('after') ? true : undefined));
    expect(received).to.deep.equal(['after']);
    // Alone: the first try and two retries; when it shares a chunk with 'after', one more try
    // inside the chunk before the runner isolates it.
    expect(attempts).to.be.within(3, 4);

    const dead = await readDlq(topic, 2);
    const [poison, failed] = [...dead].sort((a, b) => Number(a.headers[DLQ_HEADER.offset]) - Number(b.headers[DLQ_HEADER.offset]));
    expect(poison!.value?.toString()).to.equal('not avro at all');
    expect(poison!.key).to.equal(key);
    expect(poison!.headers[DLQ_HEADER.error]).to.match(/PoisonMessageError: unknown schema fingerprint/);
    expect(poison!.headers[DLQ_HEADER.topic]).to.equal(topic);
    expect(poison!.headers[DLQ_HEADER.partition]).to.match(/^\d+$/);
    expect(failed!.headers[DLQ_HEADER.error]).to.match(/handler refuses this event/);
    expect(failed!.headers[HEADER.type]).to.equal('probe.recorded');
    expect(Number(failed!.headers[DLQ_HEADER.offset])).to.be.greaterThan(Number(poison!.headers[DLQ_HEADER.offset]));
  });

  for (const signal of ['SIGKILL', 'SIGTERM'] as const) {
    const how = signal === 'SIGKILL' ? 'killed (SIGKILL) mid-stream' : 'stopped gracefully (SIGTERM) mid-stream, exiting within 10 s';
    it(`loses nothing and applies nothing twice when a consumer process is ${how}`, async function () {
      this.timeout(180_000);
      const { topic, publisher } = await setup('crash');
      const collection = `counters_${randomUUID().slice(0, 8)}`;
      const group = `crash-${randomUUID()}`;
      const probes = Array.from({ length: 12 }, (_, i) => `probe-${i}`);
      const perProbe = 250;
      const total = probes.length * perProbe;
      for (let seq = 0; seq < perProbe; seq += 50) {
        await publisher.publish(probes.flatMap((p) => Array.from({ length: 50 }, (_, i) => recorded(p, seq + i))));
      }
      const applied = async () => {
        const docs = await db.collection(collection).find().toArray();
        return docs.reduce((sum, d) => sum + (d.count as number), 0);
      };
      const startChild = async (): Promise<ChildProcess> => {
        const child = spawn(process.execPath, ['--disable-warning=TimeoutNegativeWarning', 'test/support/probe-consumer.ts'], {
          env: {
            ...process.env,
            KAFKA_BROKERS: env.KAFKA_BROKERS,
            MONGODB_URI: env.MONGODB_URI,
            SCHEMA_REGISTRY_URL: env.SCHEMA_REGISTRY_URL,
            MONGODB_DB: db.databaseName,
            PROBE_TOPIC: topic,
            PROBE_GROUP: group,
            PROBE_COLLECTION: collection,
            PROBE_CHUNK: '5',
          },
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        cleanups.push(async () => child.exitCode === null && child.kill('SIGKILL'));
        return child;
      };

      const first = await startChild();
      const atKill = await eventually(
        'some events applied',
        async () => {
          const n = await applied();
          return n >= total / 10 ? n : undefined;
        },
        60_000,
      );
      const signalled = Date.now();
      first.kill(signal);
      await once(first, 'exit');
      expect(Date.now() - signalled, 'time to exit').to.be.lessThan(10_000);
      const afterKill = await applied();
      expect(afterKill, 'the stop landed mid-stream').to.be.lessThan(total);
      expect(afterKill).to.be.at.least(atKill);

      const second = await startChild();
      await eventually('every event applied', async () => ((await applied()) >= total ? true : undefined), 120_000);
      second.kill('SIGTERM');
      await once(second, 'exit');

      const docs = await db.collection<Counter & Document>(collection).find().sort({ _id: 1 }).toArray();
      expect(docs.map((d) => d.probeId)).to.deep.equal([...probes].sort());
      for (const d of docs) {
        expect(d.count, d.probeId).to.equal(perProbe);
        expect(d.seqs, d.probeId).to.deep.equal(Array.from({ length: perProbe }, (_, i) => i));
        expect(d._v).to.equal(perProbe);
      }
    });
  }

  it('applies one chunk that updates more documents than FerretDB has database connections (120), without hanging it', async function () {
    this.timeout(60_000);
    const collection = `counters_${randomUUID().slice(0, 8)}`;
    const applier = new ProjectionApplier(db, counterProjection(collection));
    const probes = Array.from({ length: 120 }, (_, i) => `wide-${i}`);
    const chunk = (seq: number) =>
      probes.map((p, i) => ({ ...recorded(p, seq), position: { topic: 'wide', partition: 0, offset: String(seq * 1000 + i) } }));
    await applier.handle(chunk(0));
    // 120 existing documents replaced by one chunk: as one update command of 120 statements it
    // would deadlock FerretDB's pool of 50 connections; the applier writes in batches.
    const started = Date.now();
    await applier.handle(chunk(1));
    expect(Date.now() - started).to.be.lessThan(15_000);
    expect(await db.collection(collection).countDocuments({ count: 2 })).to.equal(probes.length);
  });

  it('commits handled offsets on its interval, not after every chunk, and what is left when it stops', async () => {
    const { topic, codec, publisher, admin } = await setup('commits');
    const committed = async (groupId: string) =>
      (await admin.fetchOffsets({ groupId, topics: [topic] }))
        .flatMap((t) => t.partitions)
        .map((p) => BigInt(p.offset))
        .reduce((sum, o) => sum + (o > 0n ? o : 0n), 0n);
    const end = async () => (await admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + BigInt(p.high), 0n);
    const run = (groupId: string, commitIntervalMs: number, seen: DeliveredEvent[]) =>
      consume(codec, publisher, topic, async (e) => void seen.push(e), groupId, { commitIntervalMs });
    await publisher.publish(Array.from({ length: 30 }, (_, i) => recorded(`probe-${i % 6}`, i)));

    // An interval longer than the test: nothing is committed while it runs, everything once it stops.
    const slowGroup = `commit-slow-${randomUUID()}`;
    const slowSeen: DeliveredEvent[] = [];
    const slow = run(slowGroup, 600_000, slowSeen);
    await slow.start();
    await eventually('30 events handled', async () => (slowSeen.length >= 30 ? true : undefined));
    expect(await committed(slowGroup), 'committed while running').to.equal(0n);
    await slow.stop();
    expect(await committed(slowGroup), 'committed at the stop').to.equal(await end());

    // The same group again: what was committed at the stop is not delivered again.
    const againSeen: DeliveredEvent[] = [];
    const again = run(slowGroup, 600_000, againSeen);
    await again.start();
    await publisher.publish(recorded('probe-late', 1));
    await eventually('the new event', async () => (againSeen.length >= 1 ? true : undefined));
    await again.stop();
    expect(againSeen.map((e) => (e.data as { probeId: string }).probeId)).to.deep.equal(['probe-late']);

    // A short interval: the commits follow while it runs, with no stop and no further event.
    const quickGroup = `commit-quick-${randomUUID()}`;
    const quickSeen: DeliveredEvent[] = [];
    const quick = run(quickGroup, 200, quickSeen);
    await quick.start();
    const target = await end();
    await eventually('the offsets committed on the interval', async () => ((await committed(quickGroup)) === target ? true : undefined));
    expect(quickSeen.length).to.equal(31);
  });

  it('hands no later chunk of a batch to its handler once it is stopping, and a new member gets the rest', async () => {
    const { topic, codec, publisher } = await setup('stop-mid-batch');
    // One key: one partition, so the first fetch brings all 40 in one batch of 8 chunks.
    await publisher.publish(Array.from({ length: 40 }, (_, i) => recorded('probe-one', i)));
    const groupId = `stop-mid-batch-${randomUUID()}`;
    const chunks: number[][] = [];
    let stopped: Promise<void> | undefined;
    const first: ConsumerRunner = consume(
      codec,
      publisher,
      topic,
      {
        async handle(events) {
          chunks.push(events.map((e) => (e.data as { seq: number }).seq));
          // Stop from inside the first chunk: the runner waits for this batch, whose other chunks must not be handed over.
          stopped ??= first.stop();
        },
      },
      groupId,
      { chunkSize: 5 },
    );
    await first.start();
    await eventually('the first chunk', async () => (stopped ? true : undefined));
    await stopped;
    expect(chunks, 'chunks handed over before the stop took effect').to.deep.equal([[0, 1, 2, 3, 4]]);

    // The first chunk was committed when the runner stopped; the rest were never handed over, so a new member gets them.
    const rest: number[] = [];
    const second = consume(codec, publisher, topic, async (e) => void rest.push((e.data as { seq: number }).seq), groupId);
    await second.start();
    await eventually('the other 35', async () => (rest.length >= 35 ? true : undefined));
    expect(rest).to.deep.equal(Array.from({ length: 35 }, (_, i) => i + 5));
  });

  it('applies an event published twice (same event id, two offsets) once', async () => {
    const { topic, codec, publisher } = await setup('duplicate');
    const collection = `counters_${randomUUID().slice(0, 8)}`;
    const applier = new ProjectionApplier(db, counterProjection(collection));
    const runner = new ConsumerRunner({ kafka, codec, publisher, log, groupId: `dup-${randomUUID()}`, topics: [topic], handler: applier });
    cleanups.push(() => runner.stop());
    await runner.start();
    const first = recorded('probe-dup', 1);
    await publisher.publish(first);
    await publisher.publish(first);
    await publisher.publish(recorded('probe-dup', 2));
    await eventually('the later event', async () => {
      const doc = await db.collection(collection).findOne({ _id: 'probe-dup' } as Document);
      return doc?.lastSeq === 2 ? doc : undefined;
    });
    const doc = await db.collection<Counter & Document>(collection).findOne({ _id: 'probe-dup' } as Document);
    expect(doc?.seqs).to.deep.equal([1, 2]);
    expect(doc?._v).to.equal(2);
  });

  it('replays a projection into a shadow collection that matches the live one, and swaps it in', async function () {
    this.timeout(120_000);
    const { topic, codec, catalog, publisher } = await setup('replay');
    const collection = `counters_${randomUUID().slice(0, 8)}`;
    const projection = counterProjection(collection);
    const applier = new ProjectionApplier(db, projection);
    const runner = new ConsumerRunner({ kafka, codec, publisher, log, groupId: `live-${randomUUID()}`, topics: [topic], handler: applier });
    cleanups.push(() => runner.stop());
    await runner.start();
    const events = ['a', 'b', 'c', 'd'].flatMap((p) => Array.from({ length: 30 }, (_, i) => recorded(`probe-${p}`, i)));
    await publisher.publish(events);
    await publisher.publish([{ ...recorded('probe-d', 99), type: 'probe.reset', data: { probeId: 'probe-d' } }]);
    await eventually('the live projection', async () => (applier.applied === events.length + 1 ? true : undefined));
    const live = await db.collection(collection).find().sort({ _id: 1 }).toArray();
    expect(live.find((d) => String(d._id) === 'probe-d')?._deleted).to.equal(true);

    const progress: number[] = [];
    const result = await replayProjection({
      kafka,
      codec,
      catalog,
      publisher,
      db,
      projection,
      log,
      onProgress: (p) => progress.push(p.done),
    });
    expect(result.messages).to.equal(events.length + 1);
    expect(result.applied).to.equal(events.length + 1);
    const swapped = await projectionCollection(db, collection);
    const rebuilt = await swapped.find().sort({ _id: 1 }).toArray();
    expect(rebuilt).to.deep.equal(live);
    expect(progress.at(-1)).to.equal(events.length + 1);
    // Exactly one physical collection is left for the projection: the rebuilt one.
    const names = (await db.listCollections().toArray()).map((c) => c.name).filter((n) => n.startsWith(collection));
    expect(names).to.deep.equal([swapped.collectionName]);

    // The live consumer keeps applying to the swapped-in collection.
    await publisher.publish(recorded('probe-a', 30));
    await eventually('live write after the swap', async () => {
      const doc = await (await projectionCollection(db, collection)).findOne({ _id: 'probe-a' } as Document);
      return doc?.count === 31 ? true : undefined;
    });
  });

  it('replays with fewer documents in memory than the projection has (written, evicted, read back) to the documents the guarded path writes', async function () {
    this.timeout(120_000);
    const { topic, codec, catalog, publisher } = await setup('replay-evict');
    // Documents by seq, not by probe: each one gathers events from every partition, so a replay
    // meets it again in later chunks after it was written and evicted. Partitions interleave
    // differently in two consumers, so its evolve does not depend on their order (as the
    // platform's multi-topic projections); probe-z's events, one partition, go to a document of
    // their own, which a reset deletes.
    const spread = (collection: string): Projection<Counter, ProbeEvent> => {
      const base = counterProjection(collection);
      return {
        ...base,
        name: 'probe-spread',
        documentId: (e) => (e.data.probeId === 'probe-z' ? 'solo' : `seq-${(e.data as { seq: number }).seq % 6}`),
        evolve(doc, event) {
          const next = base.evolve(doc, event);
          if (next === null) return null;
          const probeId = event.data.probeId === 'probe-z' ? 'probe-z' : 'spread';
          return { ...next, probeId, lastSeq: Math.max(doc?.lastSeq ?? -1, next.lastSeq), seqs: [...next.seqs].sort((a, b) => a - b) };
        },
      };
    };
    const events = ['a', 'b', 'c', 'd', 'e', 'f', 'z'].flatMap((p) => Array.from({ length: 12 }, (_, i) => recorded(`probe-${p}`, i)));
    const twice = recorded('probe-b', 101);
    await publisher.publish(events);
    await publisher.publish([twice, twice]); // the same event at two offsets: applied once
    await publisher.publish([{ ...recorded('probe-z', 99), type: 'probe.reset', data: { probeId: 'probe-z' } }]);
    await publisher.publish(events.slice(0, 10).map((e) => recorded(e.data.probeId, e.data.seq + 60)));
    const applies = events.length + 1 + 1 + 10;

    // The reference: the guarded read-then-write path, as a live consumer applies the log.
    const guarded = `counters_${randomUUID().slice(0, 8)}`;
    const applier = new ProjectionApplier(db, spread(guarded));
    const runner = new ConsumerRunner({ kafka, codec, publisher, log, groupId: `live-${randomUUID()}`, topics: [topic], handler: applier });
    cleanups.push(() => runner.stop());
    await runner.start();
    await eventually('the guarded projection', async () => (applier.applied === applies ? true : undefined));

    const collection = `counters_${randomUUID().slice(0, 8)}`;
    const result = await replayProjection({
      kafka,
      codec,
      catalog,
      publisher,
      db,
      projection: spread(collection),
      log,
      bufferedDocuments: 2,
    });
    expect(result.messages).to.equal(events.length + 2 + 1 + 10);
    expect(result.applied).to.equal(applies);
    expect(result.documents).to.equal(7);
    const rebuilt = await (await projectionCollection(db, collection)).find().sort({ _id: 1 }).toArray();
    const reference = await db.collection(guarded).find().sort({ _id: 1 }).toArray();
    expect(rebuilt).to.deep.equal(reference);
    expect(rebuilt.find((d) => String(d._id) === 'seq-0')?._pos).to.have.length(3);
    expect(rebuilt.find((d) => String(d._id) === 'solo')?._deleted).to.equal(true);
  });
});
