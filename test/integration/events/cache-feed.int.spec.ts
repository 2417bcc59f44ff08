import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Admin, Kafka } from 'kafkajs';
import type { Db, Document } from 'mongodb';
import { CACHE_FEED_GROUP, startCacheFeed, sweepAbandonedFeedGroups } from '../../../events/cache-feed.ts';
import { ConsumerRunner } from '../../../events/consumer.ts';
import { createKafka } from '../../../events/kafka.ts';
import { ProjectionCache } from '../../../events/projection-cache.ts';
import { ProjectionApplier, findStored } from '../../../events/projection.ts';
import { EventPublisher } from '../../../events/publisher.ts';
import { ensureTopics } from '../../../events/topics.ts';
import { connectMongo, type MongoHandle } from '../../../services/platform/mongo.ts';
import { eventually, testLogger } from '../../support/env.ts';
import { counterProjection, probeCatalog, recorded, uniqueTopic, type Counter } from '../../support/probe.ts';
import { registeredCodec } from '../../support/registered-codec.ts';
import type { StackEnv } from '../../../deploy/local/stack.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';

const log = testLogger();

describe('a projection cache fed from the log, with real Kafka and MongoDB (integration)', () => {
  let kafka: Kafka;
  let admin: Admin;
  let mongo: MongoHandle;
  let db: Db;
  const cleanups: (() => Promise<unknown>)[] = [];
  let env: StackEnv;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    env = await useStack();
    kafka = createKafka({ brokers: [env.KAFKA_BROKERS], clientId: 'cache-feed-test' }, log);
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

  /** A topic, the counter projection applied by its own consumer group, and a publisher. */
  async function projected() {
    const topic = uniqueTopic('cache');
    await ensureTopics(admin, [topic], { partitions: 3, replicationFactor: 1 });
    const codec = await registeredCodec(probeCatalog(topic), env);
    const publisher = new EventPublisher(kafka, codec, { timeoutMs: 5000 });
    const projection = counterProjection(`counter_${randomUUID().slice(0, 8)}`);
    const projectionGroup = `projection-${randomUUID().slice(0, 8)}`;
    const runner = new ConsumerRunner({
      kafka,
      codec,
      publisher,
      log,
      groupId: projectionGroup,
      topics: [topic],
      handler: new ProjectionApplier(db, projection),
    });
    await runner.start();
    cleanups.push(
      () => publisher.disconnect(),
      () => runner.stop(),
      () => admin.deleteGroups([projectionGroup]),
    );
    let loads = 0;
    const load = (id: string) => {
      loads++;
      return findStored(db.collection(projection.collection), { _id: id });
    };
    const inDb = (id: string) => db.collection<Document>(projection.collection).findOne({ _id: id } as Document);
    return { topic, codec, publisher, projection, projectionGroup, load, loads: () => loads, inDb };
  }

  // The cache's clock, moved forward instead of sleeping out an entry's lifetime.
  let skew = 0;
  const now = () => Date.now() + skew;
  const later = (ms: number) => void (skew += ms);

  it('starts at the end of the log, keeps a loaded document current without reloading it, and matches the projection', async () => {
    const { topic, codec, publisher, projection, projectionGroup, load, loads, inDb } = await projected();
    const probe = `p-${randomUUID().slice(0, 8)}`;
    await publisher.publish(recorded(probe, 1));
    await eventually('the projection to apply the first event', async () => ((await inDb(probe))?.count === 1 ? true : undefined));

    // Entries not in step live 1 ms, so a second read without a load proves the first was trusted.
    const cache = new ProjectionCache<Counter>(projection, [topic], { load, untrustedTtlMs: 1, trustedTtlMs: 60_000, now });
    const feed = await startCacheFeed({
      kafka,
      admin,
      codec,
      publisher,
      log,
      groupId: `feed-${randomUUID().slice(0, 8)}`,
      caches: [{ cache, projectionGroup }],
      pollMs: 50,
    });
    cleanups.push(() => feed.stop());
    await eventually('the feed to be live', async () => (cache.live ? true : undefined));
    await eventually('a load in step with the projection', async () => {
      await cache.get(probe);
      const before = loads();
      later(5);
      await cache.get(probe);
      return loads() === before ? true : undefined;
    });
    const loadsBefore = loads();

    await publisher.publish([recorded(probe, 2), recorded(probe, 3)]);
    const followed = await eventually('the cache to follow the log', async () => {
      const doc = await cache.get(probe);
      return doc?.count === 3 ? doc : undefined;
    });
    expect(loads(), 'followed from the log, not reloaded').to.equal(loadsBefore);
    // Each event applied once: the first came with the loaded document, the others from the feed.
    expect(followed.seqs).to.deep.equal([1, 2, 3]);
    // Bookkeeping included, the cached document is the one the projection stores.
    await eventually('the projection to catch up', async () => ((await inDb(probe))?.count === 3 ? true : undefined));
    expect(cache.peek(probe)).to.deep.equal(await inDb(probe));
  });

  it('falls back to reloading when its feed stops', async () => {
    const { topic, codec, publisher, projection, projectionGroup, load, loads, inDb } = await projected();
    const probe = `p-${randomUUID().slice(0, 8)}`;
    await publisher.publish(recorded(probe, 1));
    await eventually('the projection to apply it', async () => ((await inDb(probe)) ? true : undefined));
    const cache = new ProjectionCache<Counter>(projection, [topic], { load, untrustedTtlMs: 1, trustedTtlMs: 60_000, now });
    const feed = await startCacheFeed({
      kafka,
      admin,
      codec,
      publisher,
      log,
      groupId: `feed-${randomUUID().slice(0, 8)}`,
      caches: [{ cache, projectionGroup }],
      pollMs: 50,
    });
    await eventually('the feed to be live', async () => (cache.live ? true : undefined));
    await eventually('a trusted entry', async () => {
      await cache.get(probe);
      const before = loads();
      later(5);
      await cache.get(probe);
      return loads() === before ? true : undefined;
    });

    await feed.stop();
    expect(cache.live).to.equal(false);
    const before = loads();
    later(5);
    expect(await cache.get(probe)).to.include({ count: 1 });
    expect(loads(), 'without a feed, the entry lives the short lifetime').to.equal(before + 1);
  });

  it("leaves no group behind: the feed commits nothing, a gone replica's empty group is swept, a live one is kept", async () => {
    const { topic, codec, publisher, projection, projectionGroup, load, inDb } = await projected();
    const prefix = `t${randomUUID().slice(0, 8)}.`;
    const groups = async () => new Set((await admin.listGroups()).groups.map((g) => g.groupId).filter((id) => id.startsWith(prefix)));
    const cache = new ProjectionCache<Counter>(projection, [topic], { load, untrustedTtlMs: 1, trustedTtlMs: 60_000, now });
    const liveGroup = `${prefix}${CACHE_FEED_GROUP}live`;
    const feed = await startCacheFeed({
      kafka,
      admin,
      codec,
      publisher,
      log,
      groupId: liveGroup,
      caches: [{ cache, projectionGroup }],
      pollMs: 50,
    });
    cleanups.push(() => feed.stop());
    await eventually('the feed to be live', async () => (cache.live ? true : undefined));
    const probe = `p-${randomUUID().slice(0, 8)}`;
    await cache.get(probe);
    await publisher.publish([recorded(probe, 1), recorded(probe, 2)]);
    await eventually('the projection to apply them', async () => ((await inDb(probe))?.count === 2 ? true : undefined));
    await eventually('the cache to follow the log', async () => ((await cache.get(probe))?.count === 2 ? true : undefined));
    // No offsets in the feed's group: a group whose process is killed holds none, and the broker drops it.
    const committed = await admin.fetchOffsets({ groupId: liveGroup, topics: [topic] });
    expect(committed.flatMap((t) => t.partitions.map((p) => p.offset))).to.satisfy(
      (o: string[]) => o.length > 0 && o.every((x) => x === '-1'),
    );

    // A replica gone without its stop: its group has no member left (the session ended).
    const goneGroup = `${prefix}${CACHE_FEED_GROUP}gone`;
    const gone = kafka.consumer({ groupId: goneGroup });
    await gone.connect();
    await gone.subscribe({ topics: [topic] });
    let joined = false;
    gone.on(gone.events.GROUP_JOIN, () => void (joined = true));
    await gone.run({ autoCommit: false, eachMessage: async () => undefined });
    await eventually('the gone replica to join', async () => (joined ? true : undefined));
    await gone.disconnect();
    // A group that is not a cache feed's, empty too: never touched.
    const otherGroup = `${prefix}projection-x`;
    const other = kafka.consumer({ groupId: otherGroup });
    await other.connect();
    await other.subscribe({ topics: [topic] });
    let otherJoined = false;
    other.on(other.events.GROUP_JOIN, () => void (otherJoined = true));
    await other.run({ eachMessage: async () => undefined });
    await eventually('the other group to join', async () => (otherJoined ? true : undefined));
    await other.disconnect();
    cleanups.push(() => admin.deleteGroups([otherGroup]));
    expect(await groups()).to.include.members([liveGroup, goneGroup, otherGroup]);

    expect(await sweepAbandonedFeedGroups(admin, prefix)).to.deep.equal([goneGroup]);
    const left = await groups();
    expect(left.has(goneGroup)).to.equal(false);
    expect(left.has(liveGroup), 'the live feed keeps its group').to.equal(true);
    expect(left.has(otherGroup), 'not a cache feed: not touched').to.equal(true);
    expect(cache.live).to.equal(true);

    // A stop deletes its own group.
    await feed.stop();
    expect((await groups()).has(liveGroup)).to.equal(false);
  });
});
