/**
 * Vision speed with a warm pool, on the analysis fixture pages served on 127.0.0.1: a bare capture
 * (screenshot + DOM + aria snapshot: the baseline), a capture as the service makes it (plus the page
 * report with axe), each analysis type over a stored report, and pages per minute at 2 concurrent
 * service captures. Short on purpose: the machine is small and shared.
 *
 *   npm run bench:vision
 *   BENCH_CAPTURES=40 BENCH_SECONDS=15 npm run bench:vision
 *
 * Env: BENCH_CAPTURES sequential captures timed for p50/p99 (default 30); BENCH_SECONDS of the
 * 2-concurrent run (default 10); CHROMIUM_PATH as for the service.
 */
import { BrowserPool } from '../services/vision/browser/browser-pool.ts';
import { analyze } from '../services/vision/analysis/analyze.ts';
import { inspectPage } from '../services/vision/analysis/page-report.ts';
import { ANALYSIS_TYPES } from '../services/vision/analysis/types.ts';
import { capture, type CaptureRequest } from '../services/vision/browser/capture.ts';
import { resolveChromiumPath } from '../services/vision/browser/chromium-path.ts';
import { parseAllowList } from '../services/platform/allow-list.ts';
import { startFixtureSite } from '../test/integration/vision/fixture-site.ts';
import { runMain } from './run-main.ts';

const out = (line: string) => process.stdout.write(`${line}\n`);
const err = (line: string) => process.stderr.write(`${line}\n`);

const percentile = (sorted: readonly number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;

async function main(): Promise<void> {
  const captures = Number(process.env.BENCH_CAPTURES ?? 30);
  const seconds = Number(process.env.BENCH_SECONDS ?? 10);
  const site = await startFixtureSite();
  const pool = new BrowserPool({
    executablePath: resolveChromiumPath(),
    allowList: parseAllowList(`127.0.0.1:${site.port}`),
    maxConcurrent: 2,
  });
  const request: CaptureRequest = {
    url: `${site.origin}/analysis/defects`,
    timeoutMs: 30_000,
    maxBytes: 5_000_000,
    viewport: { width: 1280, height: 800 },
  };
  const serviceCapture = () => capture(pool, request, (page, left) => inspectPage(page, left));
  const timed = async (n: number, run: () => Promise<unknown>): Promise<number[]> => {
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const started = performance.now();
      await run();
      times.push(performance.now() - started);
    }
    return times.sort((a, b) => a - b);
  };
  const line = (what: string, t: readonly number[]) =>
    `${what}: n=${t.length} p50=${percentile(t, 50).toFixed(1)} ms p99=${percentile(t, 99).toFixed(1)} ms`;
  try {
    for (let i = 0; i < 3; i++) await serviceCapture(); // warm: launch, first context, caches, axe parsed

    const bare = await timed(captures, () => capture(pool, request));
    const full = await timed(captures, serviceCapture);
    out(line('capture, bare (screenshot + DOM + aria; the baseline)', bare));
    out(line('capture as the service does it (+ page report with axe-core)', full));
    out(`  ratio service/bare p50: ${(percentile(full, 50) / percentile(bare, 50)).toFixed(2)}x`);

    const shot = await serviceCapture();
    for (const type of ANALYSIS_TYPES) {
      out(
        line(
          `analysis ${type} over the stored report and PNG`,
          await timed(50, async () => analyze(type, { report: shot.inspection, png: shot.png })),
        ),
      );
    }

    let done = 0;
    const until = performance.now() + seconds * 1000;
    const worker = async () => {
      while (performance.now() < until) {
        await serviceCapture();
        done++;
      }
    };
    const started = performance.now();
    await Promise.all([worker(), worker()]);
    const elapsed = (performance.now() - started) / 1000;
    out(
      `service capture, 2 concurrent callers for ${elapsed.toFixed(1)} s: ${done} pages = ${((done / elapsed) * 60).toFixed(0)} pages/minute`,
    );
  } finally {
    await pool.close();
    await site.close();
  }
}

await runMain(main, err);
