export interface LoadFigures {
  perSecond: number;
  p50: number;
  p99: number;
  /** Requests answered other than as `send` expects, or not at all. */
  failed: number;
}

/** `clients` closed loops sending `send(i)` for `seconds`: throughput and latency of what was answered. */
export async function closedLoop(seconds: number, clients: number, send: (i: number) => Promise<boolean>): Promise<LoadFigures> {
  const until = performance.now() + seconds * 1000;
  const latencies: number[] = [];
  let failed = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < until) {
        const at = performance.now();
        const ok = await send(next++).catch(() => false);
        latencies.push(performance.now() - at);
        if (!ok) failed++;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.ceil(p * latencies.length) - 1)] ?? Number.NaN;
  return { perSecond: latencies.length / elapsed, p50: at(0.5), p99: at(0.99), failed };
}
