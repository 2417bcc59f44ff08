import type { Admin } from 'kafkajs';

export interface TopicSettings {
  partitions: number;
  replicationFactor: number;
}

export const dlqTopic = (topic: string): string => `${topic}.dlq`;

/**
 * Event topics are the system of record: they keep everything (retention -1), and each has a
 * dead-letter twin. Existing topics are left as they are; creating is idempotent.
 */
export async function ensureTopics(admin: Admin, topics: readonly string[], settings: TopicSettings): Promise<string[]> {
  const wanted = [...new Set(topics.flatMap((t) => [t, dlqTopic(t)]))];
  const existing = new Set(await admin.listTopics());
  const missing = wanted.filter((t) => !existing.has(t));
  if (missing.length === 0) return [];
  try {
    await createMissing(admin, missing, settings);
  } catch (err) {
    if (!isUnknownTopic(err)) throw err;
    // The controller made them, but the broker kafkajs then asked for their leaders had not yet
    // heard of them (seen on a loaded machine): wait for the leaders ourselves, with a deadline.
    await waitForLeaders(admin, missing);
  }
  return missing;
}

/** How long a topic just created may take to show a leader for every partition. */
const LEADERS_WITHIN_MS = 30_000;

const isUnknownTopic = (err: unknown): boolean => (err as { type?: unknown } | null)?.type === 'UNKNOWN_TOPIC_OR_PARTITION';

export async function waitForLeaders(
  admin: Pick<Admin, 'fetchTopicMetadata'>,
  topics: readonly string[],
  withinMs = LEADERS_WITHIN_MS,
): Promise<void> {
  const deadline = Date.now() + withinMs;
  let delay = 50;
  for (;;) {
    try {
      const { topics: found } = await admin.fetchTopicMetadata({ topics: [...topics] });
      const ready =
        found.length === topics.length && found.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0));
      if (ready) return;
    } catch (err) {
      if (!isUnknownTopic(err)) throw err;
    }
    if (Date.now() > deadline)
      throw new Error(`topics without a leader ${withinMs / 1000} s after they were created: ${topics.join(', ')}`);
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 500);
  }
}

async function createMissing(admin: Pick<Admin, 'createTopics'>, missing: readonly string[], settings: TopicSettings): Promise<void> {
  await admin.createTopics({
    waitForLeaders: true,
    topics: missing.map((topic) => ({
      topic,
      numPartitions: settings.partitions,
      replicationFactor: settings.replicationFactor,
      configEntries: [
        { name: 'retention.ms', value: '-1' },
        { name: 'retention.bytes', value: '-1' },
        { name: 'min.insync.replicas', value: String(Math.min(2, settings.replicationFactor)) },
      ],
    })),
  });
}
