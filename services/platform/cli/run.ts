import { loadConfig } from '../config.ts';
import { createLogger, setRootLogger, type Logger } from '../logger.ts';
import { SERVICES } from '../registry.ts';
import { createRuntime, type Runtime } from '../runtime.ts';
import type { RunningService, ServiceModule } from '../service.ts';
import { UsageError } from './exit.ts';

export function selectServices(names: readonly string[]): ServiceModule[] {
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
  stop(): Promise<void>;
}

export async function startServices(modules: readonly ServiceModule[], env: NodeJS.ProcessEnv, log?: Logger): Promise<RunningPlatform> {
  const config = loadConfig(env);
  const logger = log ?? createLogger(config.logLevel);
  setRootLogger(logger);
  if (config.generatedSecrets.length > 0) {
    logger.warn({ generated: config.generatedSecrets }, 'development: generated throwaway secrets (set them to keep tokens and keys valid across restarts)');
  }
  const runtime = await createRuntime(config, logger);
  const services: RunningService[] = [];
  const stop = async () => {
    for (const s of [...services].reverse()) await s.stop().catch((err: unknown) => logger.error({ err, service: s.name }, 'stop failed'));
    await runtime.close();
  };
  try {
    for (const m of modules) services.push(await m.start(runtime));
  } catch (err) {
    await stop();
    throw err;
  }
  return { runtime, services, stop };
}

/** Resolves on the first SIGINT/SIGTERM; a second one exits at once. */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const handler = (signal: NodeJS.Signals) => {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
      process.once('SIGINT', () => process.exit(130));
      process.once('SIGTERM', () => process.exit(143));
      resolve(signal);
    };
    process.on('SIGINT', handler);
    process.on('SIGTERM', handler);
  });
}

export function printUrls(services: readonly RunningService[]): void {
  const width = Math.max(0, ...services.map((s) => s.name.length));
  for (const s of services) process.stdout.write(`  ${s.name.padEnd(width)}  ${s.url ?? '(background worker)'}\n`);
}

export async function runCommand(names: readonly string[]): Promise<number> {
  const modules = selectServices(names);
  const platform = await startServices(modules, process.env);
  process.stdout.write('svc is running:\n');
  printUrls(platform.services);
  await untilSignal();
  await platform.stop();
  return 0;
}
