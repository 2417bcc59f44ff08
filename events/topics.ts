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
  return missing;
}
