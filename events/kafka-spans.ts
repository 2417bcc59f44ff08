import { context, SpanKind, SpanStatusCode, trace, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import type { KafkaMessage } from 'kafkajs';
import type { DeliveredEvent } from './envelope.ts';
import { activeTracer, errorType } from './tracer.ts';
import { extractTraceContext, injectTraceHeaders, type HeaderSink } from './trace-headers.ts';

/**
 * Spans of the backbone (OpenTelemetry messaging conventions): one producer span per send, whose
 * context goes into every record's `traceparent`; one consumer span per record handled, the child
 * of its producer's. Attributes name topics, partitions, offsets, groups, event ids and types,
 * never a record's key or value (a key can be a key hash or an address, a value anything).
 */

const MESSAGING = {
  system: 'messaging.system',
  operationType: 'messaging.operation.type',
  operationName: 'messaging.operation.name',
  destination: 'messaging.destination.name',
  partition: 'messaging.destination.partition.id',
  group: 'messaging.consumer.group.name',
  offset: 'messaging.kafka.offset',
  messageId: 'messaging.message.id',
  batchCount: 'messaging.batch.message_count',
} as const;

/** The event's type and correlation id: what an operator searches a trace by. */
export const EVENT_ATTRIBUTE = { type: 'svc.event.type', correlationId: 'svc.correlation_id', outcome: 'svc.outcome' } as const;

export interface TopicBatch {
  topic: string;
  messages: { headers?: HeaderSink }[];
}

/**
 * Runs `send` inside a producer span and writes that span's context into each record's headers
 * (a copy of them: a caller's headers object is not changed under it). Without a tracer, just `send`.
 */
export async function withProducerSpan<T>(batches: readonly TopicBatch[], send: () => Promise<T>): Promise<T> {
  const tracer = activeTracer();
  if (!tracer) return send();
  const topics = [...new Set(batches.map((b) => b.topic))];
  const count = batches.reduce((n, b) => n + b.messages.length, 0);
  const attributes: Attributes = {
    [MESSAGING.system]: 'kafka',
    [MESSAGING.operationType]: 'send',
    [MESSAGING.operationName]: 'send',
    [MESSAGING.destination]: topics.join(','),
  };
  if (count > 1) attributes[MESSAGING.batchCount] = count;
  const span = tracer.startSpan(`send ${topics.join(',')}`, { kind: SpanKind.PRODUCER, attributes });
  const withSpan = trace.setSpan(context.active(), span);
  for (const batch of batches)
    for (const message of batch.messages) {
      const headers: HeaderSink = { ...message.headers };
      injectTraceHeaders(withSpan, headers);
      message.headers = headers;
    }
  try {
    return await context.with(withSpan, send);
  } catch (err) {
    failed(span, err);
    throw err;
  } finally {
    span.end();
  }
}

// The span of each record in hand, found by its decoded event (handlers) or its raw message (dead letters).
const spans = new WeakMap<object, Span>();

/** The consumer span of a delivered event, while its chunk is being handled. */
export const spanOfEvent = (event: object): Span | undefined => spans.get(event);

/** Runs fn with the event's consumer span as the active one (its database calls and publishes then belong to it). */
export function inEventSpan<T>(event: object, fn: () => T): T {
  if (!activeTracer()) return fn();
  const span = spans.get(event);
  return span ? context.with(trace.setSpan(context.active(), span), fn) : fn();
}

export interface ChunkSpans {
  /** Runs the chunk's handling: inside the one record's span when the chunk holds one. */
  run<T>(fn: () => Promise<T>): Promise<T>;
  /** Ends every span: `handled`, or `interrupted` when the runner stopped before the chunk was done. */
  end(done: boolean): void;
}

const NO_SPANS: ChunkSpans = { run: (fn) => fn(), end: () => undefined };

/** One consumer span per record of a chunk, each the child of the context its producer wrote in its headers. */
export function startChunkSpans(
  chunk: readonly { event: DeliveredEvent; message: KafkaMessage }[],
  topic: string,
  partition: number,
  group: string,
): ChunkSpans {
  const tracer = activeTracer();
  if (!tracer || chunk.length === 0) return NO_SPANS;
  const started = chunk.map(({ event, message }) => {
    const span = consumerSpan(tracer, message, topic, partition, group, {
      [MESSAGING.messageId]: event.metadata.eventId,
      [EVENT_ATTRIBUTE.type]: event.type,
      [EVENT_ATTRIBUTE.correlationId]: event.metadata.correlationId,
    });
    spans.set(event, span);
    spans.set(message, span);
    return span;
  });
  return {
    run: (fn) => (started.length === 1 ? context.with(trace.setSpan(context.active(), started[0]!), fn) : fn()),
    end: (done) => {
      for (const span of started) {
        span.setAttribute(EVENT_ATTRIBUTE.outcome, done ? (deadLettered.has(span) ? 'dead-lettered' : 'handled') : 'interrupted');
        span.end();
      }
    },
  };
}

const deadLettered = new WeakSet<Span>();

/** Marks a record's span as dead-lettered, or makes one for a record that never decoded (poison). */
export function recordDeadLetter(message: KafkaMessage, topic: string, partition: number, group: string, err: unknown): void {
  const existing = spans.get(message);
  if (existing) {
    deadLettered.add(existing);
    failed(existing, err);
    return;
  }
  const tracer = activeTracer();
  if (!tracer) return;
  const span = consumerSpan(tracer, message, topic, partition, group, { [EVENT_ATTRIBUTE.outcome]: 'dead-lettered' });
  failed(span, err);
  span.end();
}

/** A failed attempt at an event, to be retried: an event on its span, named by the failure's type. */
export function recordRetry(event: object, err: unknown): void {
  spans.get(event)?.addEvent('retry', { 'error.type': errorType(err) });
}

function consumerSpan(tracer: Tracer, message: KafkaMessage, topic: string, partition: number, group: string, extra: Attributes): Span {
  return tracer.startSpan(
    `process ${topic}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        [MESSAGING.system]: 'kafka',
        [MESSAGING.operationType]: 'process',
        [MESSAGING.operationName]: 'process',
        [MESSAGING.destination]: topic,
        [MESSAGING.partition]: String(partition),
        [MESSAGING.group]: group,
        [MESSAGING.offset]: Number(message.offset),
        ...extra,
      },
    },
    extractTraceContext(message.headers),
  );
}

function failed(span: Span, err: unknown): void {
  span.setAttribute('error.type', errorType(err));
  span.setStatus({ code: SpanStatusCode.ERROR });
}
