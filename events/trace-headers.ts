import { ROOT_CONTEXT, type Context, type TextMapGetter, type TextMapSetter } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

/** The W3C Trace Context headers, in Kafka records beside `correlation-id`, and in HTTP requests. */
export const TRACE_HEADER = { parent: 'traceparent', state: 'tracestate' } as const;

/** Kafka record headers (Buffers, strings, arrays) and node:http's incoming headers both fit. */
export type TraceCarrier = Readonly<Record<string, Buffer | string | readonly (Buffer | string)[] | undefined>>;

/** Where injected headers go: a Kafka record's own headers object. */
export type HeaderSink = Record<string, Buffer | string | (Buffer | string)[] | undefined>;

// The propagator itself, not the global one: the codec works the same whether or not an SDK (and
// its global propagator) is installed, so it is testable on its own and never silently a no-op.
const propagator = new W3CTraceContextPropagator();

const getter: TextMapGetter<TraceCarrier> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const raw = carrier[key];
    const first = Array.isArray(raw) ? (raw as readonly (Buffer | string)[])[0] : (raw as Buffer | string | undefined);
    if (first === undefined) return undefined;
    return typeof first === 'string' ? first : first.toString('latin1');
  },
};

const setter: TextMapSetter<HeaderSink> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

/**
 * Writes the context's span as `traceparent` (and `tracestate` when it has one) into the headers,
 * replacing any copied from another record (a dead letter carries its original's): the new record
 * is caused by the current span, not by the original's producer.
 */
export function injectTraceHeaders(context: Context, headers: HeaderSink): void {
  delete headers[TRACE_HEADER.parent];
  delete headers[TRACE_HEADER.state];
  propagator.inject(context, headers, setter);
}

/**
 * The remote span a record or request names, as the parent context of what handles it; the base
 * context (root by default) when it names none or a malformed one (anyone can write a header).
 */
export function extractTraceContext(headers: TraceCarrier | undefined, base: Context = ROOT_CONTEXT): Context {
  if (!headers || headers[TRACE_HEADER.parent] === undefined) return base;
  return propagator.extract(base, headers, getter);
}
