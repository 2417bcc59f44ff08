import type { Logger } from './logger.ts';

export const HOUR_MS = 3_600_000;

/**
 * Runs `work` after `firstDelayMs` (default at once) and then every `intervalMs` (retention sweeps and
 * the like), one run at a time, never keeping the process alive; a failed run is logged and the next
 * one comes as planned. stop() waits for a run in flight. Every replica runs its own: the work must
 * be idempotent (a deleteMany is).
 */
export function every(
  intervalMs: number,
  work: () => Promise<void>,
  log: Logger,
  what: string,
  options: { firstDelayMs?: number } = {},
): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  let stopped = false;
  const run = () => {
    if (stopped) return;
    running ??= work()
      .catch((err: unknown) => log.warn({ err: (err as Error).message }, `${what} failed; it runs again later`))
      .finally(() => (running = undefined));
  };
  const timer = setInterval(run, intervalMs);
  timer.unref();
  const first = setTimeout(run, options.firstDelayMs ?? 0);
  first.unref();
  return {
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      clearTimeout(first);
      await running;
    },
  };
}
