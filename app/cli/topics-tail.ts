import { randomUUID } from 'node:crypto';
import type { KafkaMessage } from 'kafkajs';
import { type EventCodec, HEADER, header } from '../../events/codec.ts';
import type { Runtime } from '../../services/platform/runtime.ts';
import { UsageError } from './exit.ts';

export const TAIL_USAGE = `svc topics tail <topic> [--from beginning|end|<offset>|<ISO time>] [--limit N] [--json]`;

export interface TailOptions {
  from?: string;
  limit?: string;
  json?: boolean;
}

type From = { kind: 'beginning' } | { kind: 'end' } | { kind: 'offset'; offset: bigint } | { kind: 'time'; ms: number };

export function parseFrom(value: string | undefined): From {
  if (value === undefined || value === 'end') return { kind: 'end' };
  if (value === 'beginning') return { kind: 'beginning' };
  if (/^\d+$/.test(value)) return { kind: 'offset', offset: BigInt(value) };
  const ms = Date.parse(value);
  if (/^\d{4}-\d{2}-\d{2}/.test(value) && !Number.isNaN(ms)) return { kind: 'time', ms };
  throw new UsageError(`--from takes beginning, end, an offset or an ISO time, not "${value}"`);
}

/** One record as printed: decoded through the registry by its schema id (or, before the registry, by its fingerprint). */
export interface TailedRecord {
  topic: string;
  partition: number;
  offset: string;
  timestamp: string;
  key: string | null;
  type: string | null;
  schemaId: number | null;
  value: unknown;
  error?: string;
}

async function decodeRecord(
  rt: Pick<Runtime, 'schemaRegistry'>,
  codec: EventCodec,
  message: KafkaMessage,
): Promise<Pick<TailedRecord, 'schemaId' | 'value' | 'error'>> {
  const value = message.value;
  if (!value) return { schemaId: null, value: null };
  try {
    if (header(message, HEADER.fingerprint) !== undefined) {
      // A record from before the registry: its schema is only in the catalog's files.
      const event = codec.decode(message);
      return { schemaId: null, value: { ...event.metadata, ...(event.data as Record<string, unknown>) } };
    }
    const { schemaId, record } = await rt.schemaRegistry.decodeWithWriter(value);
    return { schemaId, value: record };
  } catch (err) {
    return { schemaId: value.length >= 5 && value[0] === 0 ? value.readUInt32BE(1) : null, value: null, error: (err as Error).message };
  }
}

const jsonValue = (_key: string, v: unknown): unknown =>
  typeof v === 'bigint' ? v.toString() : Buffer.isBuffer(v) ? v.toString('base64') : v instanceof Date ? v.toISOString() : v;

/**
 * `svc topics tail`: a topic's records as JSON, decoded through the registry, from where --from
 * says; follows new records until Ctrl-C, or stops after --limit. Reads with a throwaway consumer
 * group that commits nothing and is deleted at the end.
 */
export async function tailTopic(
  rt: Runtime,
  given: string,
  options: TailOptions,
  out: (line: string) => void,
  signal?: AbortSignal,
): Promise<number> {
  const prefix = rt.config.kafka.topicPrefix;
  const known = await rt.admin.listTopics();
  const topic = known.includes(given) ? given : prefix + given;
  if (!known.includes(topic)) throw new UsageError(`unknown topic "${given}"`);
  const from = parseFrom(options.from);
  const limit = options.limit === undefined ? Number.POSITIVE_INFINITY : Number(options.limit);
  if (options.limit !== undefined && (!Number.isInteger(limit) || limit < 1)) throw new UsageError('--limit takes a whole number from 1');

  const groupId = `${prefix}svc-tail-${randomUUID().slice(0, 8)}`;
  const consumer = rt.kafka.consumer({ groupId, allowAutoTopicCreation: false, maxWaitTimeInMs: 200 });
  let printed = 0;
  let finish: (() => void) | undefined;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  signal?.addEventListener('abort', () => finish?.(), { once: true });
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: from.kind === 'beginning' });
    const seeks: { partition: number; offset: string }[] = [];
    if (from.kind === 'offset') {
      for (const p of await rt.admin.fetchTopicOffsets(topic)) seeks.push({ partition: p.partition, offset: from.offset.toString() });
    } else if (from.kind === 'time') {
      for (const p of await rt.admin.fetchTopicOffsetsByTimestamp(topic, from.ms)) seeks.push({ partition: p.partition, offset: p.offset });
    }
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch, heartbeat }) => {
        for (const message of batch.messages) {
          if (printed >= limit) break;
          const decoded = await decodeRecord(rt, rt.codec, message);
          const record: TailedRecord = {
            topic,
            partition: batch.partition,
            offset: message.offset,
            timestamp: new Date(Number(message.timestamp)).toISOString(),
            key: message.key ? message.key.toString('utf8') : null,
            type: header(message, HEADER.type) ?? null,
            ...decoded,
          };
          out(
            options.json
              ? JSON.stringify(record, jsonValue)
              : `${record.partition}@${record.offset} ${record.timestamp} ${record.type ?? '(no type)'} key=${record.key ?? ''} schema=${record.schemaId ?? 'pre-registry'} ${
                  record.error ? `(cannot decode: ${record.error})` : JSON.stringify(record.value, jsonValue)
                }`,
          );
          printed++;
        }
        await heartbeat();
        if (printed >= limit) finish?.();
      },
    });
    for (const s of seeks) consumer.seek({ topic, ...s });
    await finished;
  } finally {
    await consumer.disconnect().catch(() => undefined);
    await rt.admin.deleteGroups([groupId]).catch(() => undefined);
  }
  return 0;
}
