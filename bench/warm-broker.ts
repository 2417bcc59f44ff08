import type { Kafka } from 'kafkajs';
import { ensureTopics } from '../events/topics.ts';
import { countFromStart, runnerLikeConsumer } from './bare-consume.ts';
import { withTimeout } from './with-timeout.ts';

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
 * and commit with the services' consumer settings, and deletes the topic after.
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
  const consumers = Array.from({ length: groups }, (_, g) => runnerLikeConsumer(kafka, `${topic}.g${g}`));
  const seen = new Array<number>(groups).fill(0);
  let allSeen!: () => void;
  const done = new Promise<void>((r) => (allSeen = r));
  const count = (g: number, n: number) => {
    seen[g]! += n;
    if (seen.every((s) => s >= sends)) allSeen();
  };
  try {
    await admin.connect();
    await ensureTopics(admin, [topic], { partitions: 3, replicationFactor: 1 });
    // The runner's consumer settings retry a join without end: bounded here, so a broker that never lets them join fails the bench.
    await withTimeout(
      () => `warming the broker: not all ${groups} consumer groups joined`,
      Promise.all(consumers.map((consumer, g) => countFromStart(consumer, topic, (n) => count(g, n)))),
      timeoutMs,
    );
    await producer.connect();
    const value = Buffer.alloc(256, 1);
    for (let i = 0; i < sends; i++) {
      await producer.send({ topic, acks: -1, messages: [{ key: String(i % 64), value }] });
      if ((i + 1) % 1000 === 0) options.progress?.(`warming the broker: ${i + 1}/${sends} records sent`);
    }
    // The consumers' wait starts once the records are out: on a slow machine the sends alone take long.
    await withTimeout(() => `warming the broker: consumers saw ${seen.join(', ')} of ${sends} records`, done, timeoutMs);
    return { sends, groups, ms: performance.now() - started };
  } finally {
    await Promise.all(consumers.map((c) => c.disconnect().catch(() => undefined)));
    await producer.disconnect().catch(() => undefined);
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
  }
}
