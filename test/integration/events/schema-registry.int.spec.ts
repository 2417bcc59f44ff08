import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Admin, Kafka, KafkaMessage } from 'kafkajs';
import type { Db } from 'mongodb';
import type { StackEnv } from '../../../deploy/local/stack.ts';
import { EventCatalog } from '../../../events/catalog.ts';
import { type EventCodec, HEADER, SchemaNotRegisteredError } from '../../../events/codec.ts';
import { projectionCollection } from '../../../events/collections.ts';
import { ConsumerRunner } from '../../../events/consumer.ts';
import { type Event, newEvent } from '../../../events/envelope.ts';
import { createKafka } from '../../../events/kafka.ts';
import { ProjectionApplier, type Projection } from '../../../events/projection.ts';
import { EventPublisher } from '../../../events/publisher.ts';
import { registryFormatRewrite, repartition } from '../../../events/repartition.ts';
import { replayProjection } from '../../../events/replay.ts';
import { loadPolicy } from '../../../events/schema-compatibility.ts';
import { SchemaRefusedError, subjectOf } from '../../../events/schema-registry.ts';
import { dlqTopic, ensureTopics } from '../../../events/topics.ts';
import { connectMongo, type MongoHandle } from '../../../services/platform/mongo.ts';
import { eventually, testLogger } from '../../support/env.ts';
import { legacyRecord } from '../../support/legacy-records.ts';
import { probeDefinitions, uniqueTopic } from '../../support/probe.ts';
import { registeredCodec, registryOf } from '../../support/registered-codec.ts';
import { STACK_TIMEOUT_MS, currentStack, useStack } from '../../support/stack.ts';

const log = testLogger();
const EVOLUTION = join(import.meta.dirname, '..', '..', 'fixtures', 'schemas-evolution');

interface Recorded {
  probeId: string;
  seq: number;
  note: string;
  weight?: number;
  channel?: string;
  region?: string;
}
type RecordedEvent = Event<'probe.recorded', Recorded>;

interface Seen extends Record<string, unknown> {
  probeId: string;
  seqs: number[];
  channels: string[];
  weights: number[];
}

/** What a release's projection keeps: every seq, channel and weight it read, in log order. */
const seenProjection = (collection: string): Projection<Seen, RecordedEvent> => ({
  name: 'probe-seen',
  collection,
  handles: ['probe.recorded'],
  documentId: (e) => e.data.probeId,
  evolve(doc, e) {
    const current = doc ?? { probeId: e.data.probeId, seqs: [], channels: [], weights: [] };
    return {
      ...current,
      seqs: [...current.seqs, e.data.seq],
      channels: [...current.channels, e.data.channel ?? '(none)'],
      weights: [...current.weights, e.data.weight ?? -1],
    };
  },
});

/** Release N reads v1..v3 (v3: channel WEB|API, default WEB); release N+1 writes v4 (region added, channel CLI added). */
const releaseN = (topic: string) => new EventCatalog(probeDefinitions(topic, { withReset: false }), join(EVOLUTION, 'n'));
const releaseN1 = (topic: string) => new EventCatalog(probeDefinitions(topic, { withReset: false }), join(EVOLUTION, 'n1'));

const event = (probeId: string, seq: number, extra: Partial<Recorded> = {}): RecordedEvent =>
  newEvent('probe.recorded', { probeId, seq, note: `n${seq}`, weight: 2, ...extra });

describe('schema registry: wire format, resolving readers, pre-registry records (integration)', () => {
  let env: StackEnv;
  let kafka: Kafka;
  let admin: Admin;
  let mongo: MongoHandle;
  let db: Db;
  const cleanups: (() => Promise<unknown>)[] = [];

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    env = await useStack();
    kafka = createKafka({ brokers: [env.KAFKA_BROKERS], clientId: 'schema-registry-test' }, log);
    admin = kafka.admin();
    await admin.connect();
    mongo = await connectMongo(env.MONGODB_URI, `test_${randomUUID().slice(0, 8)}`);
    db = mongo.db;
  });

  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  });

  after(async () => {
    await db?.dropDatabase().catch(() => undefined);
    await mongo?.client.close();
    await admin?.disconnect();
  });

  async function topicWith(what: string): Promise<string> {
    const topic = uniqueTopic(what);
    await ensureTopics(admin, [topic], { partitions: 3, replicationFactor: 1 });
    return topic;
  }

  function publisherOf(codec: EventCodec): EventPublisher {
    const publisher = new EventPublisher(kafka, codec, { timeoutMs: 5000 });
    cleanups.push(() => publisher.disconnect());
    return publisher;
  }

  function applier(codec: EventCodec, publisher: EventPublisher, topic: string, collection: string): ConsumerRunner {
    const runner = new ConsumerRunner({
      kafka,
      codec,
      publisher,
      log,
      groupId: `g-${randomUUID()}`,
      topics: [topic],
      handler: new ProjectionApplier(db, seenProjection(collection)),
      retries: 1,
      backoff: { initialMs: 20, maxMs: 200 },
    });
    cleanups.push(() => runner.stop());
    return runner;
  }

  const messagesOn = async (topic: string): Promise<number> =>
    (await admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);

  /** Every record of a topic as Kafka holds it, once `count` are there. */
  async function readRaw(topic: string, count: number): Promise<KafkaMessage[]> {
    const got: KafkaMessage[] = [];
    const reader = kafka.consumer({ groupId: `raw-${randomUUID()}` });
    cleanups.push(() => reader.disconnect());
    await reader.connect();
    await reader.subscribe({ topic, fromBeginning: true });
    await reader.run({ eachMessage: async ({ message }) => void got.push(message) });
    await eventually(`${count} records on ${topic}`, async () => (got.length >= count ? true : undefined));
    await reader.stop();
    return got;
  }

  async function allSeen(collection: string, total: number): Promise<Seen[]> {
    const c = await projectionCollection(db, collection);
    return eventually(
      `${total} events applied`,
      async () => {
        const docs = (await c
          .find({}, { projection: { _id: 0, probeId: 1, seqs: 1, channels: 1, weights: 1 } })
          .sort({ probeId: 1 })
          .toArray()) as unknown as Seen[];
        return docs.reduce((n, d) => n + d.seqs.length, 0) === total ? docs : undefined;
      },
      40_000,
    );
  }

  async function replayEquals(
    codec: EventCodec,
    catalog: EventCatalog,
    publisher: EventPublisher,
    collection: string,
    total: number,
  ): Promise<void> {
    const live = await (await projectionCollection(db, collection)).find().sort({ _id: 1 }).toArray();
    const result = await replayProjection({ kafka, codec, catalog, publisher, db, projection: seenProjection(collection), log });
    expect(result.applied).to.equal(total);
    const rebuilt = await (await projectionCollection(db, collection)).find().sort({ _id: 1 }).toArray();
    expect(rebuilt).to.deep.equal(live);
  }

  it('writes magic byte 0 and the registered id before the Avro body, with the event-type header and no fingerprint', async () => {
    const topic = await topicWith('wire');
    const catalog = releaseN(topic);
    const codec = await registeredCodec(catalog, env);
    const v3 = catalog.current('probe.recorded');
    const id = await registryOf(env).idOf(subjectOf(topic, v3), v3);
    expect(subjectOf(topic, v3)).to.equal(`${topic}-svc.test.probe.ProbeRecorded`);
    expect(id).to.be.a('number');
    const m = codec.encode(event('p', 1, { channel: 'API' }));
    expect(m.value[0]).to.equal(0);
    expect(m.value.readUInt32BE(1)).to.equal(id);
    expect(v3.avroType.fromBuffer(m.value.subarray(5))).to.include({ probeId: 'p', seq: 1, channel: 'API' });
    expect(m.headers[HEADER.type]).to.equal('probe.recorded');
    expect(m.headers).not.to.have.property(HEADER.fingerprint);
    expect(await registryOf(env).modeOf(subjectOf(topic, v3))).to.equal('FULL_TRANSITIVE');
  });

  it('release N applies every record release N+1 writes (a field added, an enum symbol added) during a rolling deploy: none dead-lettered, the projection equals a replay', async () => {
    const topic = await topicWith('rolling');
    const catalogN = releaseN(topic);
    const codecN = await registeredCodec(catalogN, env); // deploy of release N
    const codecN1 = await registeredCodec(releaseN1(topic), env); // deploy of N+1: v4 registered, FULL_TRANSITIVE holds
    const publisherN = publisherOf(codecN);
    const publisherN1 = publisherOf(codecN1);
    const collection = `seen_${randomUUID().slice(0, 8)}`;
    await applier(codecN, publisherN, topic, collection).start();

    // Old and new pods write side by side, on the same keys.
    const written: RecordedEvent[] = [];
    for (let seq = 0; seq < 30; seq++) {
      const probeId = `p${seq % 3}`;
      const e =
        seq % 2 === 0
          ? event(probeId, seq, { channel: seq % 4 === 0 ? 'CLI' : 'API', region: 'eu' })
          : event(probeId, seq, { channel: 'API' });
      await (seq % 2 === 0 ? publisherN1 : publisherN).publishOrdered([e]);
      written.push(e);
    }
    const seen = await allSeen(collection, written.length);
    for (const doc of seen) {
      const mine = written.filter((e) => e.data.probeId === doc.probeId);
      expect(doc.seqs).to.deep.equal(mine.map((e) => e.data.seq));
      // CLI is unknown to release N: its enum's default, WEB. Region is ignored.
      expect(doc.channels).to.deep.equal(mine.map((e) => (e.data.channel === 'CLI' ? 'WEB' : e.data.channel)));
    }
    expect(await messagesOn(dlqTopic(topic))).to.equal(0);
    await replayEquals(codecN, catalogN, publisherN, collection, written.length);
  });

  it('reads pre-registry records (raw Avro, fingerprint header) beside registry records, in a live consumer and in a replay', async () => {
    const topic = await topicWith('legacy');
    const catalogN = releaseN(topic);
    const codec = await registeredCodec(catalogN, env);
    const publisher = publisherOf(codec);
    const collection = `seen_${randomUUID().slice(0, 8)}`;
    // Written before the registry: v1 (no weight, no channel) and v3 files of the same catalog.
    const v1 = catalogN.versions('probe.recorded')[0]!;
    const old = [event('a', 1), event('a', 2, { channel: 'API' }), event('b', 3)];
    await publisher.publishRaw([legacyRecord(catalogN, old[0]!, v1), legacyRecord(catalogN, old[1]!), legacyRecord(catalogN, old[2]!, v1)]);
    const fresh = [event('a', 4, { channel: 'API' }), event('b', 5)];
    await publisher.publish(fresh);
    await applier(codec, publisher, topic, collection).start();
    const seen = await allSeen(collection, 5);
    expect(seen.find((d) => d.probeId === 'a')).to.deep.include({ seqs: [1, 2, 4], channels: ['WEB', 'API', 'API'], weights: [1, 2, 2] });
    expect(seen.find((d) => d.probeId === 'b')).to.deep.include({ seqs: [3, 5], channels: ['WEB', 'WEB'], weights: [1, 2] });
    expect(await messagesOn(dlqTopic(topic))).to.equal(0);
    await replayEquals(codec, catalogN, publisher, collection, 5);
  });

  it('dead-letters only a record that really cannot be read, with the reason', async () => {
    const topic = await topicWith('unreadable');
    const catalogN = releaseN(topic);
    const codec = await registeredCodec(catalogN, env);
    const publisher = publisherOf(codec);
    const collection = `seen_${randomUUID().slice(0, 8)}`;
    const unknownId = Buffer.from([0, 0x7f, 0xff, 0xff, 0xf0, 1, 2, 3]);
    await publisher.publishRaw([{ topic, key: 'x', value: unknownId, headers: { [HEADER.type]: 'probe.recorded' } }]);
    // A real record whose header claims another type than the one its schema id is registered for.
    const lying = codec.encode(event('x', 0));
    await publisher.publishRaw([{ topic, key: 'x', value: lying.value, headers: { ...lying.headers, [HEADER.type]: 'probe.reset' } }]);
    await publisher.publish(event('x', 1));
    await applier(codec, publisher, topic, collection).start();
    await allSeen(collection, 1);
    const reasons: string[] = [];
    const reader = kafka.consumer({ groupId: `dlq-${randomUUID()}` });
    cleanups.push(() => reader.disconnect());
    await reader.connect();
    await reader.subscribe({ topic: dlqTopic(topic), fromBeginning: true });
    await reader.run({ eachMessage: async ({ message }) => void reasons.push(String(message.headers?.['dlq-error'])) });
    await eventually('the dead letters', async () => (reasons.length > 1 ? true : undefined));
    const id = codec.idOf(catalogN.current('probe.recorded'));
    expect(reasons).to.deep.equal([
      `PoisonMessageError: schema id ${0x7fffff_f0} is not in the registry`,
      `PoisonMessageError: schema id ${id} was met as "probe.recorded", but the record says it is "probe.reset"`,
    ]);
  });

  it("the registry refuses, at the deploy step, a version that breaks its subject's mode, naming the subject and the field", async () => {
    const topic = await topicWith('breaking');
    await registeredCodec(releaseN(topic), env);
    const breaking = new EventCatalog(probeDefinitions(topic, { withReset: false }), join(EVOLUTION, 'breaking'));
    let refused: unknown;
    await registryOf(env)
      .register(breaking, loadPolicy(breaking.schemasDir))
      .catch((err: unknown) => (refused = err));
    expect(refused).to.be.instanceOf(SchemaRefusedError);
    expect((refused as Error).message).to.match(
      new RegExp(`^${topic.replaceAll('.', '\\.')}-svc\\.test\\.probe\\.ProbeRecorded: the registry refused v4 .*size`),
    );
    const v4 = breaking.current('probe.recorded');
    expect(await registryOf(env).idOf(subjectOf(topic, v4), v4)).to.equal(undefined);
  });

  it('refuses to publish a version nobody registered, and writes nothing', async () => {
    const topic = await topicWith('unregistered');
    await registeredCodec(releaseN(topic), env); // release N deployed; N+1's `svc schemas register` never ran
    const codecN1 = await registeredCodec(releaseN1(topic), env, false);
    const publisher = publisherOf(codecN1);
    let refused: unknown;
    await publisher.publish(event('p', 1, { channel: 'CLI' })).catch((err: unknown) => (refused = err));
    expect(refused).to.be.instanceOf(SchemaNotRegisteredError);
    expect(await messagesOn(topic)).to.equal(0);
  });

  it('svc topics repartition writes pre-registry records in the registry format: the same Avro bytes under the id of the version that wrote them, read back as the same events; an unknown fingerprint is copied as it was and counted', async function () {
    this.timeout(120_000);
    const from = `rp${randomUUID().slice(0, 8)}.`;
    const to = `rp${randomUUID().slice(0, 8)}.`;
    const topic = `${from}probe`;
    await ensureTopics(admin, [topic], { partitions: 3, replicationFactor: 1 });
    cleanups.push(async () => {
      const mine = (await admin.listTopics()).filter((t) => t.startsWith(from) || t.startsWith(to));
      await admin.deleteTopics({ topics: mine });
    });
    const catalogN = releaseN(topic);
    const codec = await registeredCodec(catalogN, env);
    const publisher = publisherOf(codec);
    const v1 = catalogN.versions('probe.recorded')[0]!;
    const legacy = [
      legacyRecord(catalogN, event('a', 1), v1),
      legacyRecord(catalogN, event('a', 2, { channel: 'API' })),
      legacyRecord(catalogN, event('b', 3), v1),
    ];
    const bogus = legacyRecord(catalogN, event('c', 4));
    bogus.headers[HEADER.fingerprint] = 'f'.repeat(64);
    await publisher.publishRaw([...legacy, bogus]);
    await publisher.publish([event('a', 5, { channel: 'API' }), event('b', 6)]);
    const originals = await readRaw(topic, 6);

    const { rewrite, unreadable } = registryFormatRewrite(codec);
    const report = await repartition(
      kafka,
      admin,
      { topics: [topic], fromPrefix: from, toPrefix: to, settings: { partitions: 6, replicationFactor: 1 }, rewrite },
      log,
    );
    expect(report.copied).to.deep.equal({ [`${to}probe`]: 6 });
    expect(report.rewritten).to.deep.equal({ [`${to}probe`]: 3 });
    expect(unreadable()).to.equal(1);

    const copies = await readRaw(`${to}probe`, 6);
    const byEventId = (ms: KafkaMessage[]) => new Map(ms.map((m) => [String(m.headers?.[HEADER.eventId]), m]));
    const before = byEventId(originals);
    for (const [eventId, copy] of byEventId(copies)) {
      const original = before.get(eventId)!;
      expect(String(copy.key)).to.equal(String(original.key));
      if (eventId === bogus.headers[HEADER.eventId]) {
        expect(copy.value!.equals(original.value!), 'the unreadable record, copied as it was').to.equal(true);
        continue;
      }
      expect(copy.headers, eventId).not.to.have.property(HEADER.fingerprint);
      expect(copy.value![0], eventId).to.equal(0);
      const fingerprint = original.headers?.[HEADER.fingerprint];
      if (fingerprint !== undefined) {
        const version = catalogN.byFingerprint(String(fingerprint))!;
        expect(copy.value!.readUInt32BE(1)).to.equal(codec.idOf(version));
        expect(copy.value!.subarray(5).equals(original.value!), 'the Avro body unchanged').to.equal(true);
      } else {
        expect(copy.value!.equals(original.value!), 'a registry record copied as it was').to.equal(true);
      }
      expect(codec.decode(copy)).to.deep.equal(codec.decode(original));
    }
  });

  describe('with the registry stopped', () => {
    before(async function () {
      try {
        (await currentStack()).component('schema-registry');
      } catch {
        this.skip(); // SCHEMA_REGISTRY_URL named someone else's registry: not ours to stop
      }
    });

    it('consumers whose schemas are cached go on; a record of a schema not met yet waits for the registry, then is applied, not dead-lettered; ids survive the restart', async function () {
      this.timeout(180_000);
      const registryServer = (await currentStack()).component('schema-registry');
      const topic = await topicWith('outage');
      const catalogN = releaseN(topic);
      const codecN = await registeredCodec(catalogN, env);
      const codecN1 = await registeredCodec(releaseN1(topic), env);
      const v4 = releaseN1(topic).current('probe.recorded');
      const idBefore = codecN1.idOf(v4);
      const publisherN = publisherOf(codecN);
      const publisherN1 = publisherOf(codecN1);
      const collection = `seen_${randomUUID().slice(0, 8)}`;
      const runner = applier(codecN, publisherN, topic, collection);
      await runner.start();
      await publisherN.publish(event('p', 1));
      await allSeen(collection, 1);

      await registryServer.stop();
      try {
        // Known ids: decoded from the cache, no registry needed.
        await publisherN.publish([event('p', 2), event('p', 3)]);
        await allSeen(collection, 3);
        // v4's id is new to release N: it must wait, not be dead-lettered.
        await publisherN1.publish(event('p', 4, { channel: 'CLI' }));
        await publisherN.publish(event('q', 5));
        // It waits, and its health says on what, as for any dependency.
        await eventually('the consumer to report the registry', async () =>
          /waiting for a dependency: .*schema registry unavailable/.test(runner.health().problem ?? '') ? true : undefined,
        );
        expect(await messagesOn(dlqTopic(topic))).to.equal(0);
      } finally {
        await registryServer.start();
      }
      const seen = await allSeen(collection, 5);
      expect(seen.find((d) => d.probeId === 'p')).to.deep.include({ seqs: [1, 2, 3, 4], channels: ['WEB', 'WEB', 'WEB', 'WEB'] });
      expect(await messagesOn(dlqTopic(topic))).to.equal(0);
      // Storage survives the restart: the same id for the same version.
      expect(await registryOf(env).idOf(subjectOf(topic, v4), v4)).to.equal(idBefore);
    });
  });
});
