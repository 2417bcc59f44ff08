import { context, SpanKind, SpanStatusCode, trace, type Attributes } from '@opentelemetry/api';
import { ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';
import { activeTracer, errorType } from '../../../events/tracer.ts';

/**
 * Runs a call to another server (an SMTP send) inside a client span, the child of the active one;
 * only when there is an active one, like the database's spans. The attributes are the caller's
 * choice and must name no secret, address or message content. Without a tracer, just the call.
 */
export async function withClientSpan<T>(name: string, attributes: Attributes, call: () => Promise<T>): Promise<T> {
  const tracer = activeTracer();
  const parent = context.active();
  if (!tracer || trace.getSpan(parent) === undefined) return call();
  const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), call);
  } catch (err) {
    span.setAttribute(ATTR_ERROR_TYPE, errorType(err));
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw err;
  } finally {
    span.end();
  }
}
