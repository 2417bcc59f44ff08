import type { Admin, Kafka } from 'kafkajs';
import type { EventLog } from './event-log.ts';
import type { EventCodec } from './codec.ts';
import { ConsumerRunner } from './consumer.ts';
import { errorMessage } from './errors.ts';
import { partitionKey, type DeliveredEvent } from './envelope.ts';
import type { FeedFollower, PartitionOffset } from './projection-cache.ts';
import type { EventPublisher } from './publisher.ts';

export interface CacheFeedOptions {
  kafka: Kafka;
  admin: Admin;
  codec: EventCodec;
  publisher: EventPublisher;
  log: EventLog;
  /** A group of this process alone: every process keeps its own caches. */
  groupId: string;
  /** Each cache with the consumer group of the projection it follows. */
  caches: readonly { cache: FeedFollower; projectionGroup: string }[];
  /** Other listeners of the same events (e.g. to drop negative entries). */
  onEvents?: (events: readonly DeliveredEvent[]) => void;
  /** How often the projections' committed offsets are polled; default 250 ms. */
  pollMs?: number;
}

export interface CacheFeed {
  stop(): Promise<void>;
}

/**
 * Feeds projection caches from the log: a consumer group of this process that starts at the end
 * of the topics as they are now (no history to replay), plus a poll of how far each projection's
 * group has committed. Caches are live while the group is joined; a crash or a stop makes them fall
 * back to short lifetimes until it rejoins where it left off.
 */
export async function startCacheFeed(options: CacheFeedOptions): Promise<CacheFeed> {
  const { admin, log, caches } = options;
  const topics = [...new Set(caches.flatMap(({ cache }) => [...cache.topics]))];
  const setLive = (live: boolean) => {
    for (const { cache } of caches) cache.setLive(live);
  };

  // Where the feed starts, and then resumes after a rejoin: the next offset per partition.
  const next = new Map<string, PartitionOffset>();
  for (const topic of topics) {
    for (const p of await endOffsets(admin, topic)) {
      next.set(partitionKey(topic, p.partition), { topic, partition: p.partition, offset: BigInt(p.high) });
    }
  }
  const starts = [...next.values()];
  for (const { cache } of caches) cache.feedStartsAt(starts);

  const pollCommitted = async () => {
    for (const { cache, projectionGroup } of caches) {
      const committed = await admin.fetchOffsets({ groupId: projectionGroup, topics: [...cache.topics] });
      cache.projectionCommitted(
        committed.flatMap(({ topic, partitions }) => partitions.map((p) => ({ topic, partition: p.partition, offset: BigInt(p.offset) }))),
      );
    }
  };
  await pollCommitted();
  const pollMs = options.pollMs ?? 250;
  let polling = false;
  const poller = setInterval(() => {
    if (polling) return;
    polling = true;
    pollCommitted()
      .catch((err: unknown) => log.warn({ err: errorMessage(err) }, 'cache feed: polling projection offsets failed'))
      .finally(() => (polling = false));
  }, pollMs);
  poller.unref();

  const runner = new ConsumerRunner({
    kafka: options.kafka,
    codec: options.codec,
    publisher: options.publisher,
    log,
    groupId: options.groupId,
    fromBeginning: false,
    // The feed keeps its position itself (`next`, sought on every join): no offsets in the group, so
    // the group of a process killed before its stop could delete it is empty and the broker drops it.
    commitOffsets: false,
    topics,
    handler: {
      async handle(events) {
        for (const { cache } of caches) cache.apply(events);
        options.onEvents?.(events);
        const last = events[events.length - 1];
        if (last) {
          const { topic, partition, offset } = last.position;
          next.set(partitionKey(topic, partition), { topic, partition, offset: BigInt(offset) + 1n });
        }
      },
    },
  });
  runner.on(runner.events.GROUP_JOIN, ({ payload }) => {
    // A new group would start at the end as of joining, skipping what came since we read the ends.
    for (const [topic, partitions] of Object.entries(payload.memberAssignment)) {
      for (const partition of partitions) {
        const from = next.get(partitionKey(topic, partition));
        if (from) runner.seek(topic, partition, String(from.offset));
      }
    }
    setLive(true);
  });
  runner.on(runner.events.CRASH, ({ payload }) => {
    setLive(false);
    log.warn(
      { err: errorMessage(payload.error), restart: payload.restart },
      'cache feed crashed; caches use short lifetimes until it rejoins',
    );
  });
  runner.on(runner.events.STOP, () => setLive(false));
  await runner.start();
  return {
    async stop() {
      clearInterval(poller);
      setLive(false);
      await runner.stop();
      await admin.deleteGroups([options.groupId]).catch(() => undefined);
    },
  };
}

/** The prefix of every cache-feed group name (each process adds its own host, pid and a random part). */
export const CACHE_FEED_GROUP = 'key-cache.';

/**
 * Deletes the cache-feed groups under `prefix` that have no member: left by processes killed before
 * their stop deleted them (a stopped feed deletes its own). A live feed's group is never empty while it
 * runs; if one is caught between a crash and its rejoin, the feed makes it again and seeks where it was,
 * so deleting it loses nothing. Returns the groups deleted.
 */
export async function sweepAbandonedFeedGroups(admin: Admin, prefix: string): Promise<string[]> {
  const { groups } = await admin.listGroups();
  const candidates = groups.map((g) => g.groupId).filter((id) => id.startsWith(prefix + CACHE_FEED_GROUP));
  if (candidates.length === 0) return [];
  const described = await admin.describeGroups(candidates);
  const empty = described.groups.filter((g) => g.state === 'Empty' || g.state === 'Dead').map((g) => g.groupId);
  if (empty.length === 0) return [];
  const results = await admin.deleteGroups(empty).catch(() => []);
  return results.filter((r) => r.errorCode === 0 || r.errorCode === undefined).map((r) => r.groupId);
}

/**
 * The topic's end offsets. Right after a topic is created its partitions may still be electing a
 * leader, and listing offsets then fails with a retriable error that kafkajs' admin does not retry.
 */
async function endOffsets(admin: Admin, topic: string): Promise<{ partition: number; high: string }[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await admin.fetchTopicOffsets(topic);
    } catch (err) {
      if ((err as { retriable?: boolean }).retriable !== true || attempt >= 12) throw err;
      await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 25 * 2 ** attempt)));
    }
  }
}
