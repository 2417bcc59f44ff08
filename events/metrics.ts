import type { Admin } from 'kafkajs';
import client from 'prom-client';
import { dlqTopic } from './topics.ts';

/** Event-pipeline metrics, registered once on the default registry that /metrics serves. */
export const eventMetrics = {
  published: new client.Counter({
    name: 'svc_events_published_total',
    help: 'Events acknowledged by Kafka, by topic',
    labelNames: ['topic'] as const,
  }),
  handled: new client.Counter({
    name: 'svc_events_handled_total',
    help: 'Events handled by a consumer group, by topic',
    labelNames: ['group', 'topic'] as const,
  }),
  deadLettered: new client.Counter({
    name: 'svc_dlq_messages_total',
    help: 'Messages sent to a dead-letter topic, by consumer group and source topic',
    labelNames: ['group', 'topic'] as const,
  }),
  lag: new client.Gauge({
    name: 'svc_consumer_lag',
    help: 'Messages between the last fetched batch and the partition high watermark',
    labelNames: ['group', 'topic', 'partition'] as const,
  }),
  abandonedSends: new client.Gauge({
    name: 'svc_events_abandoned_sends',
    help: 'Sends a publish stopped waiting for that the producer still retries; later publishes on their topics wait for them',
  }),
  retries: new client.Counter({
    name: 'svc_consumer_retries_total',
    help: 'Handler attempts that failed and were retried',
    labelNames: ['group', 'topic', 'reason'] as const,
  }),
};

/** A Kafka admin client and the source topics whose dead-letter twins it reads. */
interface DepthSource {
  admin: Pick<Admin, 'fetchTopicOffsets'>;
  topics: readonly string[];
}

const depthSources = new Set<DepthSource>();
/** Scrapes closer together than this reuse the last reading: every replica of every service is scraped. */
const DEPTH_READ_EVERY_MS = 10_000;
/** A scrape must answer even when Kafka does not: the gauge is then left empty rather than stale. */
const DEPTH_READ_TIMEOUT_MS = 3000;
let lastDepth: { at: number; depths: Map<string, number> } | undefined;

/** Messages held in a topic: what every partition's high watermark is past its low one. */
export async function topicDepth(admin: Pick<Admin, 'fetchTopicOffsets'>, topic: string): Promise<number> {
  let depth = 0;
  for (const p of await admin.fetchTopicOffsets(topic)) depth += Number(BigInt(p.high) - BigInt(p.low));
  return depth;
}

async function readDepths(source: DepthSource): Promise<Map<string, number>> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('dead-letter depth: Kafka did not answer in time')), DEPTH_READ_TIMEOUT_MS);
  });
  try {
    const depths = await Promise.race([
      Promise.all(source.topics.map(async (topic) => [topic, await topicDepth(source.admin, dlqTopic(topic))] as const)),
      timeout,
    ]);
    return new Map(depths);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Dead letters held per source topic, read from Kafka's watermarks when /metrics is scraped (DLQ
 * topics keep everything, so the depth only grows: an alert watches its increase). Any process with
 * a runtime reports it; dashboards take the max over instances.
 */
export const deadLetterDepth = new client.Gauge({
  name: 'svc_dlq_depth',
  help: 'Messages held in the dead-letter topic of each source topic, read from Kafka when scraped',
  labelNames: ['topic'] as const,
  async collect() {
    const source = [...depthSources].at(-1);
    if (!source) return;
    if (!lastDepth || Date.now() - lastDepth.at >= DEPTH_READ_EVERY_MS) {
      try {
        lastDepth = { at: Date.now(), depths: await readDepths(source) };
      } catch {
        lastDepth = undefined;
        this.reset();
        return;
      }
    }
    this.reset();
    for (const [topic, depth] of lastDepth.depths) this.set({ topic }, depth);
  },
});

/** Reports the DLQ depth of these source topics through `admin` until the returned function is called. */
export function reportDeadLetterDepth(admin: DepthSource['admin'], topics: readonly string[]): () => void {
  const source: DepthSource = { admin, topics };
  depthSources.add(source);
  lastDepth = undefined;
  return () => {
    depthSources.delete(source);
    lastDepth = undefined;
  };
}
