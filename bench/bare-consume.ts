import type { Consumer, Kafka } from 'kafkajs';

/** A bare kafkajs consumer with ConsumerRunner's consumer settings: the baseline our consumers are measured against. */
export function runnerLikeConsumer(kafka: Kafka, groupId: string): Consumer {
  return kafka.consumer({
    groupId,
    allowAutoTopicCreation: false,
    sessionTimeout: 30_000,
    heartbeatInterval: 3000,
    maxWaitTimeInMs: 250,
    retry: { initialRetryTime: 200, maxRetryTime: 5000, retries: Number.MAX_SAFE_INTEGER },
  });
}

/**
 * Reads `topic` from its start with ConsumerRunner's run settings and nothing else per batch than
 * counting, resolving the last offset and heartbeating: the runtime's own cost of consuming.
 */
export async function countFromStart(consumer: Consumer, topic: string, onMessages: (n: number) => void): Promise<void> {
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({
    autoCommit: true,
    eachBatchAutoResolve: false,
    partitionsConsumedConcurrently: 1,
    eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
      const n = batch.messages.length;
      if (n === 0) return;
      onMessages(n);
      resolveOffset(batch.messages[n - 1]!.offset);
      await heartbeat();
    },
  });
}
