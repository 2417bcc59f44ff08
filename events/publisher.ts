import { Partitioners, type Kafka, type Message, type Producer } from 'kafkajs';
import { SendLine } from './send-line.ts';
import type { EventCodec } from './codec.ts';
import type { Event, Position } from './envelope.ts';
import { PublishError } from './errors.ts';
import { withProducerSpan } from './kafka-spans.ts';
import { eventMetrics } from './metrics.ts';

export interface PublisherOptions {
  /** How long a publish may wait for the broker before the caller is told to retry (503). */
  timeoutMs: number;
}

export interface RawRecord {
  topic: string;
  key: string | Buffer | null;
  value: Buffer | null;
  headers: Record<string, string | Buffer>;
}

/**
 * Idempotent producer with acks from all in-sync replicas. publish() resolves only once the broker
 * acknowledged every event, so an ingress can answer after it and not before. Sends on a topic go one
 * at a time (SendLine): kafkajs can otherwise drop one of two concurrent sends after a timeout.
 */
export class EventPublisher {
  private readonly producer: Producer;
  private connected: Promise<void> | undefined;

  private readonly codec: EventCodec;
  private readonly options: PublisherOptions;
  private readonly line = new SendLine({
    abandoned: () => eventMetrics.abandonedSends.inc(),
    settled: () => eventMetrics.abandonedSends.dec(),
  });

  constructor(kafka: Kafka, codec: EventCodec, options: PublisherOptions) {
    this.codec = codec;
    this.options = options;
    this.producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
      // kafkajs' idempotent default retries without a count limit (a count limit can break its
      // sequence numbers): the caller's wait is bounded by timeoutMs instead. A send that lands after
      // the timeout is a duplicate consumers skip by event id, as long as it lands next to its original
      // (SendLine).
      retry: { initialRetryTime: 100, maxRetryTime: 1000, retries: Number.MAX_SAFE_INTEGER },
    });
    this.producer.on(this.producer.events.DISCONNECT, () => {
      this.connected = undefined;
    });
  }

  async connect(): Promise<void> {
    this.connected ??= this.producer.connect().catch((err: unknown) => {
      this.connected = undefined;
      throw err;
    });
    return this.connected;
  }

  async publish(events: Event | readonly Event[]): Promise<void> {
    const list = Array.isArray(events) ? (events as readonly Event[]) : [events as Event];
    if (list.length === 0) return;
    const byTopic = new Map<string, Message[]>();
    for (const event of list) {
      const m = this.codec.encode(event);
      const messages = byTopic.get(m.topic) ?? [];
      messages.push({ key: m.key, value: m.value, headers: m.headers });
      byTopic.set(m.topic, messages);
    }
    await this.send([...byTopic].map(([topic, messages]) => ({ topic, messages })));
  }

  /**
   * Publishes events of one aggregate (one topic, one key, hence one partition, in order) and
   * returns each event's position, so the writer can apply them to its projection at once.
   */
  async publishOrdered(events: readonly Event[]): Promise<Position[]> {
    if (events.length === 0) return [];
    const messages = events.map((e) => this.codec.encode(e));
    const { topic, key } = messages[0]!;
    if (messages.some((m) => m.topic !== topic || m.key !== key)) throw new Error('publishOrdered takes the events of one aggregate');
    const [written] = await this.send([{ topic, messages: messages.map((m) => ({ key: m.key, value: m.value, headers: m.headers })) }]);
    if (!written) throw new Error('broker returned no metadata');
    return messages.map((_, i) => ({ topic, partition: written.partition, offset: String(BigInt(written.offset) + BigInt(i)) }));
  }

  /** For records that are not catalog events: dead letters, raw provider payloads. */
  /** Returns the first offset written per topic-partition (exact per record when one is sent). */
  async publishRaw(records: readonly RawRecord[]): Promise<Position[]> {
    const byTopic = new Map<string, Message[]>();
    for (const r of records) {
      const messages = byTopic.get(r.topic) ?? [];
      messages.push({ key: r.key, value: r.value, headers: r.headers });
      byTopic.set(r.topic, messages);
    }
    return this.send([...byTopic].map(([topic, messages]) => ({ topic, messages })));
  }

  async disconnect(): Promise<void> {
    await this.producer.disconnect();
    this.connected = undefined;
  }

  /** Every record leaves through here: the producer span, and `traceparent` beside `correlation-id`, are added here once. */
  private send(topicMessages: { topic: string; messages: Message[] }[]): Promise<Position[]> {
    return withProducerSpan(topicMessages, () => this.sendNow(topicMessages));
  }

  private async sendNow(topicMessages: { topic: string; messages: Message[] }[]): Promise<Position[]> {
    const topics = topicMessages.map((t) => t.topic);
    const gaveUp = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        gaveUp.abort();
        reject(new PublishError(`Kafka did not acknowledge within ${this.options.timeoutMs} ms`));
      }, this.options.timeoutMs);
    });
    let written: Position[];
    try {
      written = await Promise.race([
        (async () => {
          await this.connect();
          const metadata = await this.line.run(topics, gaveUp.signal, () => this.producer.sendBatch({ acks: -1, topicMessages }));
          return metadata.map((m) => ({ topic: m.topicName, partition: m.partition, offset: String(m.baseOffset ?? m.offset ?? '0') }));
        })(),
        timeout,
      ]);
    } catch (err) {
      if (err instanceof PublishError) throw err;
      throw new PublishError(`publish failed: ${(err as Error).message}`, { cause: err });
    } finally {
      clearTimeout(timer);
    }
    for (const { topic, messages } of topicMessages) eventMetrics.published.inc({ topic }, messages.length);
    return written;
  }
}
