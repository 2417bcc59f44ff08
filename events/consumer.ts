import type { Consumer, Kafka, KafkaMessage } from 'kafkajs';
import type { Logger } from '../services/platform/logger.ts';
import type { EventCodec } from './codec.ts';
import type { DeliveredEvent } from './envelope.ts';
import { PoisonMessageError, errorMessage, isTransient } from './errors.ts';
import { eventMetrics } from './metrics.ts';
import type { EventPublisher } from './publisher.ts';
import { dlqTopic } from './topics.ts';

/**
 * A handler receives the events of one partition in log order, in chunks. It must be idempotent:
 * after a crash the events since the last commit are delivered again.
 */
export interface EventHandler {
  handle(events: readonly DeliveredEvent[]): Promise<void>;
}

export interface ConsumerOptions {
  kafka: Kafka;
  codec: EventCodec;
  /** Dead letters and nothing else go through it. */
  publisher: EventPublisher;
  log: Logger;
  groupId: string;
  topics: readonly string[];
  handler: EventHandler;
  fromBeginning?: boolean;
  /** Attempts after the first for a failing event before it is dead-lettered. */
  retries?: number;
  backoff?: { initialMs: number; maxMs: number };
  /** Largest group of consecutive events handed to the handler at once. */
  chunkSize?: number;
}

export const DLQ_HEADER = {
  error: 'dlq-error',
  topic: 'dlq-original-topic',
  partition: 'dlq-original-partition',
  offset: 'dlq-original-offset',
  group: 'dlq-consumer-group',
  failedAt: 'dlq-failed-at',
} as const;

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

/**
 * Runs a consumer group: per-partition order, offsets committed only for events whose handler
 * succeeded, bounded retries then the dead-letter topic, and waits out dependency outages.
 */
export class ConsumerRunner {
  private readonly consumer: Consumer;
  private readonly stopping = new AbortController();
  private readonly retries: number;
  private readonly backoff: { initialMs: number; maxMs: number };
  private readonly chunkSize: number;
  private readonly log: Logger;

  private readonly options: ConsumerOptions;

  constructor(options: ConsumerOptions) {
    this.options = options;
    this.consumer = options.kafka.consumer({
      groupId: options.groupId,
      allowAutoTopicCreation: false,
      sessionTimeout: 30_000,
      heartbeatInterval: 3000,
      maxWaitTimeInMs: 250,
      retry: { initialRetryTime: 200, maxRetryTime: 5000, retries: Number.MAX_SAFE_INTEGER },
    });
    this.retries = options.retries ?? 3;
    this.backoff = options.backoff ?? { initialMs: 100, maxMs: 5000 };
    this.chunkSize = options.chunkSize ?? 500;
    this.log = options.log.child({ component: 'consumer', group: options.groupId });
  }

  get events() {
    return this.consumer.events;
  }

  on: Consumer['on'] = (...args) => this.consumer.on(...args);

  async start(): Promise<void> {
    await this.consumer.connect();
    await this.consumer.subscribe({ topics: [...this.options.topics], fromBeginning: this.options.fromBeginning ?? true });
    await this.consumer.run({
      autoCommit: true,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: 1,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
        const { topic, partition } = batch;
        eventMetrics.lag.set({ group: this.options.groupId, topic, partition: String(partition) }, Number(batch.offsetLag()));
        let chunk: { event: DeliveredEvent; message: KafkaMessage }[] = [];
        const flush = async (): Promise<boolean> => {
          if (chunk.length === 0) return true;
          const done = await this.handleChunk(chunk, topic, partition, isRunning);
          if (done) {
            resolveOffset(chunk[chunk.length - 1]!.message.offset);
            eventMetrics.handled.inc({ group: this.options.groupId, topic }, chunk.length);
            await heartbeat();
          }
          chunk = [];
          return done;
        };
        for (const message of batch.messages) {
          if (!isRunning() || isStale()) break;
          let event: DeliveredEvent;
          try {
            event = this.options.codec.decode(message) as DeliveredEvent;
            event.position = { topic, partition, offset: message.offset };
          } catch (err) {
            if (!(await flush())) return;
            await this.deadLetter(message, topic, partition, err);
            resolveOffset(message.offset);
            continue;
          }
          chunk.push({ event, message });
          if (chunk.length >= this.chunkSize && !(await flush())) return;
        }
        if (isRunning() && !isStale()) await flush();
      },
    });
  }

  /** Where to read a partition from next; only once running (e.g. from a GROUP_JOIN listener). */
  seek(topic: string, partition: number, offset: string): void {
    this.consumer.seek({ topic, partition, offset });
  }

  /** Finishes the event in hand, commits what succeeded and leaves the group. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.consumer.disconnect();
  }

  /** Returns false when it gave up because the runner is stopping (nothing resolved). */
  private async handleChunk(
    chunk: readonly { event: DeliveredEvent; message: KafkaMessage }[],
    topic: string,
    partition: number,
    isRunning: () => boolean,
  ): Promise<boolean> {
    const events = chunk.map((c) => c.event);
    const first = await this.attempt(events, topic, isRunning, chunk.length === 1 ? this.retries : 0);
    if (first === 'ok') return true;
    if (first === 'stopping') return false;
    if (chunk.length === 1) {
      await this.deadLetter(chunk[0]!.message, topic, partition, first.error);
      return true;
    }
    // One bad event must not hold back its neighbours: go one by one to find it.
    for (const item of chunk) {
      const result = await this.attempt([item.event], topic, isRunning, this.retries);
      if (result === 'stopping') return false;
      if (result !== 'ok') await this.deadLetter(item.message, topic, partition, result.error);
    }
    return true;
  }

  private async attempt(
    events: readonly DeliveredEvent[],
    topic: string,
    isRunning: () => boolean,
    retries: number,
  ): Promise<'ok' | 'stopping' | { error: unknown }> {
    let delay = this.backoff.initialMs;
    for (let failures = 0; ; ) {
      try {
        await this.options.handler.handle(events);
        return 'ok';
      } catch (err) {
        const transient = isTransient(err);
        if (err instanceof PoisonMessageError) return { error: err };
        if (!transient && failures >= retries) return { error: err };
        if (!transient) failures++;
        eventMetrics.retries.inc({ group: this.options.groupId, topic, reason: transient ? 'transient' : 'handler' });
        this.log.warn({ err: errorMessage(err), transient, attempt: failures, events: events.length }, 'handler failed; retrying');
        if (!isRunning() || this.stopping.signal.aborted) return 'stopping';
        await sleep(delay, this.stopping.signal);
        if (this.stopping.signal.aborted) return 'stopping';
        delay = Math.min(delay * 2, this.backoff.maxMs);
      }
    }
  }

  private async deadLetter(message: KafkaMessage, topic: string, partition: number, err: unknown): Promise<void> {
    const headers: Record<string, string | Buffer> = {};
    for (const [k, v] of Object.entries(message.headers ?? {})) {
      const first = Array.isArray(v) ? v[0] : v;
      if (first !== undefined) headers[k] = first;
    }
    Object.assign(headers, {
      [DLQ_HEADER.error]: errorMessage(err).slice(0, 2000),
      [DLQ_HEADER.topic]: topic,
      [DLQ_HEADER.partition]: String(partition),
      [DLQ_HEADER.offset]: message.offset,
      [DLQ_HEADER.group]: this.options.groupId,
      [DLQ_HEADER.failedAt]: new Date().toISOString(),
    });
    // If even the DLQ cannot be written the runner must not move on: this throws and kafkajs
    // redelivers from the last committed offset.
    await this.options.publisher.publishRaw([{ topic: dlqTopic(topic), key: message.key, value: message.value, headers }]);
    eventMetrics.deadLettered.inc({ group: this.options.groupId, topic });
    this.log.error({ topic, partition, offset: message.offset, err: errorMessage(err) }, 'message dead-lettered');
  }
}

/** Adapts a one-event-at-a-time function to the chunked handler interface. */
export function eachEvent(fn: (event: DeliveredEvent) => Promise<void>): EventHandler {
  return {
    async handle(events) {
      for (const e of events) await fn(e);
    },
  };
}
