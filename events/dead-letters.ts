import type { Admin, Kafka, KafkaMessage } from 'kafkajs';
import { header } from './codec.ts';
import { DLQ_HEADER } from './consumer.ts';
import type { EventPublisher, RawRecord } from './publisher.ts';
import { committedOffsets, partitionsOf, readToEnd } from './topic-range.ts';

/**
 * Reading and re-driving dead-letter topics. A dead letter keeps the original key, value and
 * headers, plus why it failed and where it came from (DLQ_HEADER). Re-driving publishes it again
 * to its original topic tagged for the consumer group that failed it: that group handles it once
 * more (after the fix), every other group of the topic skips it, having handled the original.
 * Which dead letters were re-driven is the offset a consumer group of the DLQ has committed, so
 * running it twice re-drives nothing twice.
 */
export interface DeadLetter {
  partition: number;
  offset: string;
  eventType: string | undefined;
  eventId: string | undefined;
  error: string;
  originalTopic: string;
  originalPartition: string;
  originalOffset: string;
  group: string;
  failedAt: string;
  message: KafkaMessage;
}

export interface DeadLetterSummary {
  topic: string;
  /** Messages in the topic. */
  total: number;
  /** Messages not re-driven yet. */
  pending: number;
}

export const redriveGroupId = (groupPrefix: string, dlqTopic: string): string => `${groupPrefix}svc-dlq-redrive.${dlqTopic}`;

export async function summarize(admin: Admin, topic: string, groupPrefix: string): Promise<DeadLetterSummary> {
  const parts = await partitionsOf(admin, topic);
  const done = await committedOffsets(admin, redriveGroupId(groupPrefix, topic), topic);
  let total = 0n;
  let pending = 0n;
  for (const p of parts) {
    total += p.high - p.low;
    const from = done.get(p.partition) ?? p.low;
    pending += p.high > from ? p.high - (from > p.low ? from : p.low) : 0n;
  }
  return { topic, total: Number(total), pending: Number(pending) };
}

export function asDeadLetter(partition: number, message: KafkaMessage): DeadLetter {
  const h = (name: string) => header(message, name) ?? '';
  return {
    partition,
    offset: message.offset,
    eventType: header(message, 'event-type'),
    eventId: header(message, 'event-id'),
    error: h(DLQ_HEADER.error),
    originalTopic: h(DLQ_HEADER.topic),
    originalPartition: h(DLQ_HEADER.partition),
    originalOffset: h(DLQ_HEADER.offset),
    group: h(DLQ_HEADER.group),
    failedAt: h(DLQ_HEADER.failedAt),
    message,
  };
}

export async function readDeadLetters(options: {
  kafka: Kafka;
  admin: Admin;
  topic: string;
  groupPrefix: string;
  limit: number;
}): Promise<DeadLetter[]> {
  const letters: DeadLetter[] = [];
  await readToEnd({
    kafka: options.kafka,
    admin: options.admin,
    topic: options.topic,
    groupId: `${options.groupPrefix}svc-dlq-show.${process.pid}.${Date.now()}`,
    mode: 'all',
    onMessage: async (partition, message) => {
      letters.push(asDeadLetter(partition, message));
      // The newest are the interesting ones when there are many.
      if (letters.length > options.limit) letters.shift();
    },
  });
  return letters;
}

export interface RedriveResult {
  redriven: number;
  /** Consumer groups the re-driven messages went back to, with counts. */
  byGroup: Record<string, number>;
}

export async function redrive(options: {
  kafka: Kafka;
  admin: Admin;
  publisher: EventPublisher;
  topic: string;
  groupPrefix: string;
  /** Only dead letters of this source topic may be re-driven (the namespace's own topics). */
  allowedTopics: ReadonlySet<string>;
  onProgress?: (done: number, total: number) => void;
}): Promise<RedriveResult> {
  const byGroup: Record<string, number> = {};
  const redrivenCount = await readToEnd({
    kafka: options.kafka,
    admin: options.admin,
    topic: options.topic,
    groupId: redriveGroupId(options.groupPrefix, options.topic),
    mode: 'uncommitted',
    onProgress: options.onProgress,
    onMessage: async (partition, message) => {
      const letter = asDeadLetter(partition, message);
      if (!options.allowedTopics.has(letter.originalTopic)) {
        throw new Error(
          `dead letter at ${options.topic}/${partition}@${message.offset} names original topic "${letter.originalTopic}", which is not one of this deployment's topics`,
        );
      }
      const headers: RawRecord['headers'] = {};
      for (const [name, value] of Object.entries(message.headers ?? {})) {
        const first = Array.isArray(value) ? value[0] : value;
        if (first !== undefined && !name.startsWith('dlq-')) headers[name] = first;
      }
      headers[DLQ_HEADER.redriveGroup] = letter.group;
      headers['dlq-redriven-from'] = `${options.topic}/${partition}@${message.offset}`;
      await options.publisher.publishRaw([{ topic: letter.originalTopic, key: message.key, value: message.value, headers }]);
      byGroup[letter.group] = (byGroup[letter.group] ?? 0) + 1;
    },
  });
  return { redriven: redrivenCount, byGroup };
}
