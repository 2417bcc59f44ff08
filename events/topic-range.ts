import type { Admin, Kafka, KafkaMessage } from 'kafkajs';

type Targets = Map<number, bigint>;

export async function partitionsOf(admin: Admin, topic: string): Promise<{ partition: number; low: bigint; high: bigint }[]> {
  return (await admin.fetchTopicOffsets(topic)).map((p) => ({ partition: p.partition, low: BigInt(p.low), high: BigInt(p.high) }));
}

/** Per partition, the offset a consumer group will read next (only partitions it has committed). */
export async function committedOffsets(admin: Admin, groupId: string, topic: string): Promise<Map<number, bigint>> {
  const committed = new Map<number, bigint>();
  for (const t of await admin.fetchOffsets({ groupId, topics: [topic] })) {
    for (const p of t.partitions) if (BigInt(p.offset) >= 0n) committed.set(p.partition, BigInt(p.offset));
  }
  return committed;
}

/**
 * Reads a topic up to the end it had when the read began: from the beginning with a throwaway
 * group (deleted afterwards), or from what `groupId` committed (committing as it goes).
 */
export async function readToEnd(options: {
  kafka: Kafka;
  admin: Admin;
  topic: string;
  groupId: string;
  mode: 'all' | 'uncommitted';
  onMessage: (partition: number, message: KafkaMessage) => Promise<void>;
  onProgress?: (done: number, total: number) => void;
}): Promise<number> {
  const { kafka, admin, topic, groupId } = options;
  const parts = await partitionsOf(admin, topic);
  const starts = options.mode === 'uncommitted' ? await committedOffsets(admin, groupId, topic) : new Map<number, bigint>();
  const targets: Targets = new Map();
  const reached: Targets = new Map();
  let total = 0;
  for (const p of parts) {
    const from = starts.get(p.partition) ?? p.low;
    reached.set(p.partition, from > p.low ? from : p.low);
    targets.set(p.partition, p.high);
    total += Number(p.high - (reached.get(p.partition) ?? p.low));
  }
  const finished = () => [...targets].every(([partition, high]) => (reached.get(partition) ?? 0n) >= high);
  if (total === 0 || finished()) return 0;

  let read = 0;
  const consumer = kafka.consumer({ groupId, allowAutoTopicCreation: false, maxWaitTimeInMs: 200 });
  let settle: (() => void) | undefined;
  let fail: ((err: unknown) => void) | undefined;
  const done = new Promise<void>((resolve, reject) => ((settle = resolve), (fail = reject)));
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      autoCommit: options.mode === 'uncommitted',
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch, resolveOffset, commitOffsetsIfNecessary, heartbeat }) => {
        try {
          const high = targets.get(batch.partition) ?? 0n;
          for (const message of batch.messages) {
            if (BigInt(message.offset) >= high) break;
            await options.onMessage(batch.partition, message);
            resolveOffset(message.offset);
            reached.set(batch.partition, BigInt(message.offset) + 1n);
            read++;
            options.onProgress?.(read, total);
          }
          if (options.mode === 'uncommitted') await commitOffsetsIfNecessary();
          await heartbeat();
          if (finished()) settle?.();
        } catch (err) {
          fail?.(err);
          throw err;
        }
      },
    });
    await done;
  } finally {
    await consumer.disconnect().catch(() => undefined);
    if (options.mode === 'all') await admin.deleteGroups([groupId]).catch(() => undefined);
  }
  return read;
}
