import type { Kafka } from 'kafkajs';
import { ensureTopics } from '../events/topics.ts';

export interface BrokerWarmUp {
  sends: number;
  groups: number;
  ms: number;
}

/**
 * Brings a freshly started broker's JVM to the state a running one is in, before anything is timed.
 * A throwaway Kafka starts with its request paths interpreted or lightly compiled, and its JIT takes
 * tens of seconds of traffic to catch up: in bench:webhook it spent 20–28 ms of CPU per webhook after
 * 10 warm-up webhooks, and 6.4–6.6 ms after 500 (issue 37). Production's brokers are long warm.
 * Warming with webhooks would also grow the collections FerretDB scans on every lookup (PostgreSQL's
 * CPU per webhook tripled after 500), so this sends small records one at a time, as EventPublisher
 * does (idempotent, acks from all replicas), to a throwaway topic that `groups` consumer groups read
 * and commit, as the services' consumers do, and deletes the topic after.
 */
export async function warmBroker(
  kafka: Kafka,
  topic: string,
  options: { sends: number; groups: number; timeoutMs?: number; progress?: (line: string) => void },
): Promise<BrokerWarmUp> {
  const { sends, groups } = options;
  const started = performance.now();
  const timeoutMs = options.timeoutMs ?? 120_000;
  const admin = kafka.admin();
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
  const consumers = Array.from({ length: groups }, (_, g) => kafka.consumer({ groupId: `${topic}.g${g}`, maxWaitTimeInMs: 250 }));
  const seen = new Array<number>(groups).fill(0);
  try {
    await admin.connect();
    await ensureTopics(admin, [topic], { partitions: 3, replicationFactor: 1 });
    await Promise.all(
      consumers.map(async (consumer, g) => {
        const joined = new Promise<void>((resolve, reject) => {
          consumer.on(consumer.events.GROUP_JOIN, () => resolve());
          consumer.on(consumer.events.CRASH, (e) => reject(e.payload.error));
        });
        await consumer.connect();
        await consumer.subscribe({ topics: [topic], fromBeginning: true });
        await consumer.run({
          eachBatch: async ({ batch, resolveOffset }) => {
            for (const m of batch.messages) resolveOffset(m.offset);
            seen[g]! += batch.messages.length;
          },
        });
        await joined;
      }),
    );
    await producer.connect();
    const value = Buffer.alloc(256, 1);
    for (let i = 0; i < sends; i++) {
      await producer.send({ topic, acks: -1, messages: [{ key: String(i % 64), value }] });
      if ((i + 1) % 1000 === 0) options.progress?.(`warming the broker: ${i + 1}/${sends} records sent`);
    }
    // The consumers' wait starts once the records are out: on a slow machine the sends alone take long.
    const deadline = Date.now() + timeoutMs;
    while (seen.some((n) => n < sends)) {
      if (Date.now() > deadline) throw new Error(`warming the broker: consumers saw ${seen.join(', ')} of ${sends} records`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return { sends, groups, ms: performance.now() - started };
  } finally {
    await Promise.all(consumers.map((c) => c.disconnect().catch(() => undefined)));
    await producer.disconnect().catch(() => undefined);
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
  }
}
