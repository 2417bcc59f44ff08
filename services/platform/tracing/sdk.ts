import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { activeTracer, useTracer } from '../../../events/tracer.ts';
import { VERSION } from '../version.ts';
import type { TracingSettings } from './config.ts';

/** The process's tracing, once installed: flushed and shut down with the process. */
export interface Tracing {
  /** Exports what is queued; bounded, so a collector that is away cannot hold a stop. */
  flush(): Promise<void>;
  /** Flushes, then turns tracing off for the process (every choke point back to doing nothing). */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  serviceName: string;
  exporter: SpanExporter;
  sampler?: Sampler;
  /** batch (default): spans queue and leave every few seconds; simple: each span is exported as it ends (tests). */
  processor?: 'batch' | 'simple';
}

/** How long a flush may wait for the exporter before a stop goes on without it. */
const FLUSH_BOUND_MS = 3000;

/**
 * Installs an SDK for the whole process: the tracer every choke point uses (events/tracer.ts),
 * AsyncLocalStorage as the context manager (a request's or a record's span follows its awaits) and
 * the W3C propagator. One at a time: a second install while one is active is a mistake.
 */
export function installTracing(options: TracingOptions): Tracing {
  if (activeTracer()) throw new Error('tracing is already installed in this process');
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.serviceName, [ATTR_SERVICE_VERSION]: VERSION }),
    sampler: options.sampler ?? new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    spanProcessors: [
      options.processor === 'simple'
        ? new SimpleSpanProcessor({ exporter: options.exporter })
        : new BatchSpanProcessor({ exporter: options.exporter }),
    ],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  useTracer(provider.getTracer('svc', VERSION));
  const flush = () => bounded(provider.forceFlush());
  return {
    flush,
    async shutdown() {
      useTracer(undefined);
      await bounded(provider.shutdown());
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

/** Tracing as configured by the OTEL_* variables (services/platform/tracing/config.ts): OTLP over HTTP. */
export function installConfiguredTracing(settings: TracingSettings): Tracing {
  return installTracing({
    serviceName: settings.serviceName,
    exporter: new OTLPTraceExporter({ url: settings.url }),
    sampler: samplerOf(settings.sampler),
  });
}

/** The specification's OTEL_TRACES_SAMPLER values. */
export function samplerOf({ name, ratio }: TracingSettings['sampler']): Sampler {
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
  }
}

async function bounded(step: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([step.catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, FLUSH_BOUND_MS)))]);
  clearTimeout(timer);
}
