import { loadConfig, type Config } from '../../services/platform/config.ts';
import { createLogger, setRootLogger, type Logger } from '../../services/platform/logger.ts';
import { setHeapGrowth } from '../../services/platform/heap-growth.ts';
import { collectDefaultMetrics } from '../../services/platform/metrics.ts';
import { SERVICES } from '../registry.ts';
import { createAppRuntime } from '../runtime.ts';
import type { Runtime } from '../../services/platform/runtime.ts';

import type { ServiceEntry } from '../../services/platform/lazy-service.ts';
import type { RunningService } from '../../services/platform/service.ts';
import type { Tracing } from '../../services/platform/tracing/sdk.ts';
import { serveHttp } from '../../services/platform/wiring.ts';
import { UsageError } from './exit.ts';

/**
 * /health, /health/live and /metrics of the whole process on OPS_PORT: what probes and scrapers of a
 * process with no HTTP face of its own (billing, mailer) reach.
 */
async function opsFace(rt: Runtime, port: number): Promise<RunningService> {
  const server = await serveHttp(rt, rt.log.child({ service: 'ops' }), { service: 'ops', port, mount: () => undefined });
  return { name: 'ops', url: server.url, stop: () => server.close() };
}

export function selectServices(names: readonly string[]): ServiceEntry[] {
  if (names.length === 0) throw new UsageError('name the services to run, or "all"');
  if (names.includes('all')) return [...SERVICES];
  return names.map((name) => {
    const found = SERVICES.find((s) => s.name === name);
    if (!found) throw new UsageError(`unknown service "${name}"; known: ${SERVICES.map((s) => s.name).join(', ') || '(none yet)'}`);
    return found;
  });
}

export interface RunningPlatform {
  runtime: Runtime;
  services: RunningService[];
  /** Resolves within the configured grace whatever the dependencies' state; true when everything stopped cleanly. */
  stop(): Promise<boolean>;
}

/** What a stop needs of the runtime: to say it is stopping, its timings, and to close its clients. */
export type StoppableRuntime = Pick<Runtime, 'markStopping' | 'close'> & {
  config: Pick<Config, 'shutdownGraceMs' | 'shutdownDelayMs'>;
};

/**
 * Stops in the order that loses nothing: readiness goes 503 first and the listeners keep serving for
 * SHUTDOWN_DELAY_MS (the time the cluster takes to drop the pod from its Services' endpoints, so
 * nothing is sent to a closed port), then each service newest first (its HTTP face stops taking
 * connections and drains its requests in flight for SHUTDOWN_DRAIN_MS, its consumers finish the chunk
 * in hand, commit and leave their groups), then the shared clients. Bounded by SHUTDOWN_GRACE_MS after
 * the delay: a dependency that is gone must not keep the process alive.
 */
export async function stopPlatform(
  runtime: StoppableRuntime,
  services: readonly RunningService[],
  logger: Logger,
  tracing: Pick<Tracing, 'shutdown'> | undefined,
  wait: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): Promise<boolean> {
  runtime.markStopping();
  const { shutdownDelayMs: delayMs, shutdownGraceMs: graceMs } = runtime.config;
  if (delayMs > 0) {
    logger.info({ delayMs }, 'stopping: unready, still serving while the endpoints update');
    await wait(delayMs);
  }
  const deadline = Date.now() + graceMs;
  const work = (async () => {
    for (const s of [...services].reverse()) await s.stop().catch((err: unknown) => logger.error({ err, service: s.name }, 'stop failed'));
    await runtime.close();
    // Last, so the spans of the stop itself go out too; bounded (a collector away cannot hold it).
    await tracing?.shutdown();
  })();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), Math.max(0, deadline - Date.now()))));
  const outcome = await Promise.race([work.then(() => 'done' as const), late]);
  clearTimeout(timer);
  if (outcome === 'late') logger.error({ graceMs }, 'services did not stop within the grace period; giving up on the rest');
  return outcome === 'done';
}

export async function startServices(
  modules: readonly Pick<ServiceEntry, 'name' | 'start'>[],
  env: NodeJS.ProcessEnv,
  log?: Logger,
): Promise<RunningPlatform> {
  const config = loadConfig(env);
  const logger = log ?? createLogger(config.logLevel);
  setRootLogger(logger);
  setHeapGrowth(config.heapGrowthPercent);
  if (config.generatedSecrets.length > 0) {
    logger.warn(
      { generated: config.generatedSecrets },
      'development: generated throwaway secrets (set them to keep tokens and keys valid across restarts)',
    );
  }
  // The process's own CPU, memory, event-loop delay and GC, beside the services' metrics.
  collectDefaultMetrics();
  const tracing = await startTracing(config, logger);
  let runtime: Runtime;
  try {
    runtime = await createAppRuntime(config, logger);
  } catch (err) {
    await tracing?.shutdown();
    throw err;
  }
  const services: RunningService[] = [];
  try {
    for (const m of modules) services.push(await m.start(runtime));
    if (config.ports.ops !== undefined) services.push(await opsFace(runtime, config.ports.ops));
  } catch (err) {
    await stopPlatform(runtime, services, logger, tracing);
    throw err;
  }
  return { runtime, services, stop: () => stopPlatform(runtime, services, logger, tracing) };
}

/**
 * OpenTelemetry traces when OTEL_* configures them; before the runtime, whose database client and
 * HTTP faces are set up traced or not by it. The SDK is loaded only then: off, it costs nothing,
 * not even its import.
 */
async function startTracing(config: Config, logger: Logger): Promise<Tracing | undefined> {
  if (!config.tracing) return undefined;
  const { installConfiguredTracing } = await import('../../services/platform/tracing/sdk.ts');
  const tracing = installConfiguredTracing(config.tracing);
  // The collector's host only: an endpoint URL may carry credentials.
  logger.info({ serviceName: config.tracing.serviceName, collector: new URL(config.tracing.url).host }, 'traces on (OTLP/HTTP)');
  return tracing;
}

/**
 * Resolves on the first SIGINT/SIGTERM/SIGHUP, from the moment it is called (so a Ctrl-C during
 * start-up is a clean stop too); a second signal exits at once.
 */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
    const handler = (signal: NodeJS.Signals) => {
      for (const s of signals) process.off(s, handler);
      process.once('SIGINT', () => process.exit(130));
      process.once('SIGTERM', () => process.exit(143));
      process.once('SIGHUP', () => process.exit(129));
      resolve(signal);
    };
    for (const s of signals) process.on(s, handler);
  });
}

/** Settles with the value, or with 'signal' if a stop signal came first. */
export async function unlessSignalled<T>(work: Promise<T>, signalled: Promise<NodeJS.Signals>): Promise<T | 'signal'> {
  return Promise.race([work, signalled.then(() => 'signal' as const)]);
}

export function printUrls(services: readonly RunningService[]): void {
  const width = Math.max(0, ...services.map((s) => s.name.length));
  for (const s of services) {
    process.stdout.write(`  ${s.name.padEnd(width)}  ${s.url ?? '(background worker)'}\n`);
    if (s.adminUrl) process.stdout.write(`  ${''.padEnd(width)}  ${s.adminUrl} (admin: back-office routes)\n`);
  }
}

export async function runCommand(names: readonly string[]): Promise<number> {
  const modules = selectServices(names);
  const signalled = untilSignal();
  const starting = startServices(modules, process.env);
  const started = await unlessSignalled(starting, signalled);
  if (started === 'signal') {
    // Let the start finish (or fail) and stop what it started; bounded like any stop.
    const platform = await starting.catch(() => undefined);
    const clean = platform ? await platform.stop() : true;
    return clean ? 0 : 1;
  }
  process.stdout.write('svc is running:\n');
  printUrls(started.services);
  await signalled;
  return (await started.stop()) ? 0 : 1;
}
