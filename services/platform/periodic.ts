import type { Logger } from './logger.ts';

export const HOUR_MS = 3_600_000;

/**
 * Runs `work` now and then every `intervalMs` (retention sweeps and the like), one run at a time,
 * never keeping the process alive; a failed run is logged and the next one comes as planned.
 * Every replica runs its own: the work must be idempotent (a deleteMany is).
 */
export function every(intervalMs: number, work: () => Promise<void>, log: Logger, what: string): { stop(): void } {
  let running: Promise<void> | undefined;
  const run = () => {
    running ??= work()
      .catch((err: unknown) => log.warn({ err: (err as Error).message }, `${what} failed; it runs again later`))
      .finally(() => (running = undefined));
  };
  const timer = setInterval(run, intervalMs);
  timer.unref();
  run();
  return { stop: () => clearInterval(timer) };
}
