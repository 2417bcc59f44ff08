import { z } from 'zod';

/**
 * OpenTelemetry traces (issue 27, item 4), configured by the variables the OpenTelemetry SDK
 * specification defines, so a collector set-up written for any other service works here too.
 * Off unless an OTLP endpoint is given; OTEL_SDK_DISABLED=true wins over everything.
 *
 * The exporter reads the rest of its OTEL_EXPORTER_OTLP_* variables itself (headers, timeout,
 * compression, certificates); OTEL_EXPORTER_OTLP_HEADERS may hold a collector's token, which is
 * why it is neither parsed nor echoed here.
 */

// The specification treats an empty value as unset; the local stack hands processes empty ones.
const unsetIfEmpty = (v: unknown) => (v === '' ? undefined : v);

const otlpUrl = z.preprocess(
  unsetIfEmpty,
  z
    .url({ error: 'must be an absolute http:// or https:// URL' })
    .refine((v) => /^https?:\/\//i.test(v), { error: 'must be an http:// or https:// URL (this build exports OTLP over HTTP)' })
    .optional(),
);

const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type SamplerName = (typeof SAMPLERS)[number];

/** Spread into config.ts's schema, so every variable is listed with the rest (and in .env.example). */
export const TRACING_SCHEMA = {
  OTEL_SDK_DISABLED: z.preprocess(
    (v) => (typeof v === 'string' && v !== '' ? v.toLowerCase() : undefined),
    z.enum(['true', 'false'], { error: 'must be true or false' }).optional(),
  ),
  OTEL_SERVICE_NAME: z.preprocess(
    unsetIfEmpty,
    z
      .string()
      .max(255, { error: 'must be at most 255 characters' })
      .regex(/^[\x21-\x7e]+( [\x21-\x7e]+)*$/, { error: 'must be printable ASCII' })
      .optional(),
  ),
  OTEL_TRACES_EXPORTER: z.preprocess(
    unsetIfEmpty,
    z.enum(['otlp', 'none'], { error: 'must be otlp or none (the only trace exporters this build has)' }).optional(),
  ),
  OTEL_EXPORTER_OTLP_ENDPOINT: otlpUrl,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: otlpUrl,
  OTEL_EXPORTER_OTLP_PROTOCOL: z.preprocess(
    unsetIfEmpty,
    z.enum(['http/json'], { error: 'must be http/json (the only OTLP protocol this build speaks), or unset' }).optional(),
  ),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: z.preprocess(
    unsetIfEmpty,
    z.enum(['http/json'], { error: 'must be http/json (the only OTLP protocol this build speaks), or unset' }).optional(),
  ),
  OTEL_TRACES_SAMPLER: z.preprocess(unsetIfEmpty, z.enum(SAMPLERS, { error: `must be one of ${SAMPLERS.join(', ')}` }).optional()),
  OTEL_TRACES_SAMPLER_ARG: z.preprocess(
    unsetIfEmpty,
    z.coerce
      .number({ error: 'must be a number from 0 to 1' })
      .min(0, { error: 'must be a number from 0 to 1' })
      .max(1, { error: 'must be a number from 0 to 1' })
      .optional(),
  ),
};

const tracingEnv = z.object(TRACING_SCHEMA);
export type TracingEnv = z.infer<typeof tracingEnv>;

/** Where and how traces go, when they go anywhere. */
export interface TracingSettings {
  serviceName: string;
  /** The OTLP/HTTP traces URL: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
  url: string;
  sampler: { name: SamplerName; ratio: number };
}

export const DEFAULT_SERVICE_NAME = 'svc';

/** null: traces are off (no endpoint, OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none). */
export function tracingSettings(env: TracingEnv, problems: string[]): TracingSettings | null {
  if (env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none') return null;
  const url = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? tracesUrl(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (url === undefined) {
    if (env.OTEL_TRACES_EXPORTER === 'otlp')
      problems.push('OTEL_TRACES_EXPORTER: otlp needs OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
    return null;
  }
  const name = env.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on';
  return { serviceName: env.OTEL_SERVICE_NAME ?? DEFAULT_SERVICE_NAME, url, sampler: { name, ratio: env.OTEL_TRACES_SAMPLER_ARG ?? 1 } };
}

/** The specification's rule for the signal-less endpoint: the signal's path is appended to it. */
function tracesUrl(endpoint: string | undefined): string | undefined {
  if (endpoint === undefined) return undefined;
  return `${endpoint.replace(/\/+$/, '')}/v1/traces`;
}

/** The tracing variables set in an environment, for a tool that starts services with an env of its own (the benches). */
export function tracingVariables(env: NodeJS.ProcessEnv): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of Object.keys(TRACING_SCHEMA)) {
    const value = env[name];
    if (value !== undefined) picked[name] = value;
  }
  return picked;
}
