import type { Tracer } from '@opentelemetry/api';

let current: Tracer | undefined;

/**
 * The tracer spans are made with, or undefined while tracing is off (the default). Every choke
 * point asks this first and, when off, does exactly what it did before tracing existed: no span
 * objects, no context switches, no headers. The platform sets it when it installs an SDK.
 */
export const activeTracer = (): Tracer | undefined => current;

/** Set by whoever installs the SDK (services/platform/tracing/sdk.ts); undefined turns tracing off. */
export function useTracer(tracer: Tracer | undefined): void {
  current = tracer;
}

/**
 * What a failure is called in a span: its class or code, never its message (messages can quote
 * values: a duplicate key names the address it collided on, a driver error the query).
 */
export function errorType(err: unknown): string {
  if (err && typeof err === 'object') {
    const { code, name } = err as { code?: unknown; name?: unknown };
    if (typeof code === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(code)) return code;
    if (typeof name === 'string' && name.length > 0) return name.slice(0, 64);
  }
  return 'Error';
}
