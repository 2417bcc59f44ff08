import { randomUUID } from 'node:crypto';
import { type Admin, type Kafka, type KafkaMessage, Partitioners } from 'kafkajs';
import { CACHE_FEED_GROUP } from './cache-feed.ts';
import type { EventCodec } from './codec.ts';
import { PoisonMessageError } from './errors.ts';
import type { EventLog } from './event-log.ts';
import { ensureTopics, type TopicSettings } from './topics.ts';

/** Why a repartition did not start: the log is not quiet, or the target is not new. Nothing was written. */
export class RepartitionRefused extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`repartition refused:\n  ${problems.join('\n  ')}`);
    this.name = 'RepartitionRefused';
    this.problems = problems;
  }
}

export interface RepartitionPlan {
  /** The event topics to copy, by their names under `fromPrefix` (their dead-letter twins are made empty). */
  topics: readonly string[];
  fromPrefix: string;
  toPrefix: string;
  settings: TopicSettings;
  /**
   * A record's new value and headers in the copy, or undefined to copy it as it is (the CLI passes
   * EventCodec.toRegistryFormat, so the new topics hold no pre-registry record). Key, order, partition
   * choice and timestamp are never changed.
   */
  rewrite?: (message: KafkaMessage) => { value: Buffer; headers: Record<string, Buffer | string> } | undefined;
}

export interface RepartitionReport {
  /** Messages copied, by target topic. */
  copied: Record<string, number>;
  /** Of those, the ones `rewrite` changed, by target topic. */
  rewritten: Record<string, number>;
  /** Consumer groups made under the new prefix, each at the end of every topic its old self had consumed. */
  groups: string[];
}

/**
 * The rewrite `svc topics repartition` copies with: records from before the schema registry in its
 * format (EventCodec.toRegistryFormat). A record whose fingerprint no catalog version has could not be
 * read before either: it is copied as it is (consumers dead-letter it, as they did) and counted.
 */
export function registryFormatRewrite(codec: EventCodec): { rewrite: NonNullable<RepartitionPlan['rewrite']>; unreadable: () => number } {
  let unreadable = 0;
  return {
    rewrite(message) {
      try {
        return codec.toRegistryFormat(message);
      } catch (err) {
        if (!(err instanceof PoisonMessageError)) throw err;
        unreadable++;
        return undefined;
      }
    },
    unreadable: () => unreadable,
  };
}

type Ends = Map<string, { partition: number; low: bigint; high: bigint }[]>;

/**
 * Raises the partitions of the event topics without breaking per-key order, by moving the deployment to
 * a new topic prefix: each topic is copied into a new one with `settings.partitions`, source partition by
 * source partition in log order, each message under its own key with the publisher's partitioner, so
 * every key's events stay in one partition in their order (in the copy and after it, for replays too).
 * Kafka's own partition increase would send a key's new events to another partition than its old ones,
 * and a consumer or a replay could then apply them out of order.
 *
 * Runs only on a quiet log: every consumer group of the old prefix without members (the services
 * stopped) and at the end of every partition it consumes (nothing in flight). Then each group is made
 * under the new prefix at the end of the copied topics, so the services, started with
 * KAFKA_TOPIC_PREFIX=<toPrefix>, go on where they stopped: nothing applied twice, nothing skipped.
 */
export async function repartition(kafka: Kafka, admin: Admin, plan: RepartitionPlan, log: EventLog): Promise<RepartitionReport> {
  const { fromPrefix, toPrefix } = plan;
  if (fromPrefix === toPrefix) throw new RepartitionRefused([`the new prefix must differ from the current one ("${fromPrefix}")`]);
  const renamed = (name: string) => {
    if (!name.startsWith(fromPrefix)) throw new Error(`${name} is not under the prefix "${fromPrefix}"`);
    return toPrefix + name.slice(fromPrefix.length);
  };
  const ends: Ends = new Map();
  for (const topic of plan.topics) {
    const offsets = await admin.fetchTopicOffsets(topic);
    ends.set(
      topic,
      offsets.map((o) => ({ partition: o.partition, low: BigInt(o.low), high: BigInt(o.high) })),
    );
  }
  const groups = await quietGroups(admin, plan, ends);
  const existing = new Set(await admin.listTopics());
  const taken = plan.topics.map(renamed).filter((t) => existing.has(t));
  if (taken.length > 0) throw new RepartitionRefused(taken.map((t) => `${t} exists already: choose a new prefix`));

  await ensureTopics(admin, plan.topics.map(renamed), plan.settings);
  const copied: Record<string, number> = {};
  const rewritten: Record<string, number> = {};
  for (const topic of plan.topics) {
    const counts = await copyTopic(kafka, admin, topic, renamed(topic), ends.get(topic) ?? [], log, plan.rewrite);
    copied[renamed(topic)] = counts.copied;
    rewritten[renamed(topic)] = counts.rewritten;
  }

  const made: string[] = [];
  for (const { groupId, topics } of groups) {
    const target = renamed(groupId);
    for (const topic of topics) {
      const offsets = await admin.fetchTopicOffsets(renamed(topic));
      await admin.setOffsets({
        groupId: target,
        topic: renamed(topic),
        partitions: offsets.map((o) => ({ partition: o.partition, offset: o.high })),
      });
    }
    made.push(target);
  }
  return { copied, rewritten, groups: made };
}

/**
 * The groups of the old prefix that consume the topics, once it is sure they are all stopped and
 * caught up; the cache feeds (which commit nothing and start at the end) are not carried over.
 */
async function quietGroups(admin: Admin, plan: RepartitionPlan, ends: Ends): Promise<{ groupId: string; topics: string[] }[]> {
  const problems: string[] = [];
  const ids = (await admin.listGroups()).groups
    .map((g) => g.groupId)
    .filter((id) => id.startsWith(plan.fromPrefix) && !id.startsWith(plan.fromPrefix + CACHE_FEED_GROUP));
  const described = ids.length > 0 ? (await admin.describeGroups(ids)).groups : [];
  for (const g of described)
    if (g.members.length > 0) problems.push(`group ${g.groupId} has ${g.members.length} member(s): stop every service first`);
  const found: { groupId: string; topics: string[] }[] = [];
  for (const groupId of ids) {
    const committed = await admin.fetchOffsets({ groupId, topics: [...plan.topics] });
    const consumed = committed.filter((t) => t.partitions.some((p) => p.offset !== '-1'));
    for (const { topic, partitions } of consumed) {
      for (const p of partitions) {
        const end = ends.get(topic)?.find((e) => e.partition === p.partition);
        if (!end) continue;
        const at = p.offset === '-1' ? end.low : BigInt(p.offset);
        if (at < end.high)
          problems.push(`group ${groupId} is ${end.high - at} event(s) behind on ${topic}[${p.partition}]: let it catch up, then stop it`);
      }
    }
    if (consumed.length > 0) found.push({ groupId, topics: consumed.map((t) => t.topic) });
  }
  if (problems.length > 0) throw new RepartitionRefused(problems);
  return found;
}

/** Copies one topic up to the ends read before, in log order per source partition; returns how many messages. */
async function copyTopic(
  kafka: Kafka,
  admin: Admin,
  from: string,
  to: string,
  ends: readonly { partition: number; low: bigint; high: bigint }[],
  log: EventLog,
  rewrite: RepartitionPlan['rewrite'],
): Promise<{ copied: number; rewritten: number }> {
  const left = new Map(ends.filter((e) => e.high > e.low).map((e) => [e.partition, e.high]));
  if (left.size === 0) return { copied: 0, rewritten: 0 };
  // The publisher's settings: the same partitioner puts a key where the services will publish it next.
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  const groupId = `repartition-copy-${randomUUID()}`;
  const consumer = kafka.consumer({ groupId });
  let count = 0;
  let rewritten = 0;
  await producer.connect();
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [from], fromBeginning: true });
    const done = new Promise<void>((resolve, reject) => {
      consumer.on(consumer.events.CRASH, ({ payload }) => reject(payload.error));
      void consumer
        .run({
          autoCommit: false,
          partitionsConsumedConcurrently: 1,
          eachBatch: async ({ batch }) => {
            const end = left.get(batch.partition);
            if (end === undefined) return;
            // Only what was there when the log was found quiet; sent in order, one batch at a time.
            const messages = batch.messages.filter((m) => BigInt(m.offset) < end);
            if (messages.length > 0) {
              await producer.send({
                topic: to,
                acks: -1,
                messages: messages.map((m) => {
                  const changed = rewrite?.(m);
                  if (changed) rewritten++;
                  return {
                    key: m.key,
                    value: changed ? changed.value : m.value,
                    headers: changed ? changed.headers : (m.headers ?? {}),
                    timestamp: m.timestamp,
                  };
                }),
              });
              count += messages.length;
            }
            const last = batch.messages[batch.messages.length - 1];
            if (last && BigInt(last.offset) + 1n >= end) {
              left.delete(batch.partition);
              if (left.size === 0) resolve();
            }
          },
        })
        .catch(reject);
    });
    await done;
    log.info({ from, to, messages: count, rewritten }, 'repartition: topic copied');
  } finally {
    await consumer.disconnect().catch(() => undefined);
    await producer.disconnect().catch(() => undefined);
    // It committed nothing; deleting it now only spares the broker its clean-up.
    await admin.deleteGroups([groupId]).catch(() => undefined);
  }
  return { copied: count, rewritten };
}
