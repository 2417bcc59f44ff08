/**
 * Page capture speed with a warm pool: the fixture page of the integration tests served on 127.0.0.1,
 * captured (screenshot + DOM + aria snapshot) one at a time for latency, then by two concurrent
 * callers for throughput. Short on purpose: the machine is small and shared.
 *
 *   node bench/vision-capture.ts
 *   BENCH_CAPTURES=40 BENCH_SECONDS=15 node bench/vision-capture.ts
 *
 * Env: BENCH_CAPTURES sequential captures timed for p50/p99 (default 30); BENCH_SECONDS of the
 * 2-concurrent run (default 10); CHROMIUM_PATH as for the service.
 */
import { BrowserPool } from '../services/vision/browser/browser-pool.ts';
import { capture, type CaptureRequest } from '../services/vision/browser/capture.ts';
import { resolveChromiumPath } from '../services/vision/browser/chromium-path.ts';
import { parseAllowList } from '../services/vision/browser/ssrf-guard.ts';
import { startFixtureSite } from '../test/integration/vision/fixture-site.ts';
import { runMain } from './run-main.ts';

const out = (line: string) => process.stdout.write(`${line}\n`);
const err = (line: string) => process.stderr.write(`${line}\n`);

const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;

async function main(): Promise<void> {
  const captures = Number(process.env.BENCH_CAPTURES ?? 30);
  const seconds = Number(process.env.BENCH_SECONDS ?? 10);
  const site = await startFixtureSite();
  const pool = new BrowserPool({ executablePath: resolveChromiumPath(), allowList: parseAllowList(`127.0.0.1:${site.port}`), maxConcurrent: 2 });
  const request: CaptureRequest = { url: `${site.origin}/basic`, timeoutMs: 30_000, maxBytes: 5_000_000, viewport: { width: 1280, height: 800 } };
  try {
    for (let i = 0; i < 3; i++) await capture(pool, request); // warm: launch, first context, caches

    const times: number[] = [];
    for (let i = 0; i < captures; i++) {
      const started = performance.now();
      await capture(pool, request);
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    out(`capture 1280x800 viewport, sequential, warm pool: n=${captures} p50=${percentile(times, 50).toFixed(0)} ms p99=${percentile(times, 99).toFixed(0)} ms max=${(times.at(-1) ?? NaN).toFixed(0)} ms`);

    let done = 0;
    const until = performance.now() + seconds * 1000;
    const worker = async () => {
      while (performance.now() < until) {
        await capture(pool, request);
        done++;
      }
    };
    const started = performance.now();
    await Promise.all([worker(), worker()]);
    const elapsed = (performance.now() - started) / 1000;
    out(`capture, 2 concurrent callers for ${elapsed.toFixed(1)} s: ${done} pages = ${((done / elapsed) * 60).toFixed(0)} pages/minute`);
  } finally {
    await pool.close();
    await site.close();
  }
}

await runMain(main, err);
