import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Caller } from '../../services/premium/caller.ts';
import { capturePage } from '../../services/vision/app/capture-page.ts';
import { reviewPage } from '../../services/vision/app/review-page.ts';
import { reportPath } from '../../services/vision/app/run-review.ts';
import { runTestSuite } from '../../services/vision/app/run-test-suite.ts';
import { BrowserPool } from '../../services/vision/browser/browser-pool.ts';
import { resolveChromiumPath } from '../../services/vision/browser/chromium-path.ts';
import { visionDeps } from '../../services/vision/engine.ts';
import { captureInput, testInput } from '../../services/vision/input.ts';
import { parse } from '../../services/premium/gated-request.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { HttpError } from '../../services/platform/http/errors.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { createAppRuntime } from '../runtime.ts';

import { EXIT, UsageError } from './exit.ts';

export const VISION_USAGE = `svc vision capture <url>      capture a page: stored like the service's, the PNG also written to --out (default ./<id>.png)
svc vision test <suite.json>  run a test suite: the file holds the body of POST /api/glm/test, {url, testSuite};
                              prints its review page's URL (reportUrl), and with --out writes that page (HTML) there
options: --customer <id> (default: operator), whose screenshots and baselines they are; --full-page`;

export interface VisionCommandOptions {
  customer?: string;
  out?: string;
  fullPage?: boolean;
}

/**
 * Operators' vision commands: the service's operations run in this process, with a browser of its
 * own, recorded in the log like the service's; they print what the HTTP API answers. A test run
 * with a failed check exits 1.
 */
export async function visionCommand(args: readonly string[], options: VisionCommandOptions): Promise<number> {
  const [action, target, ...extra] = args;
  if (!action || !['capture', 'test'].includes(action) || !target || extra.length > 0) throw new UsageError(`usage:\n${VISION_USAGE}`);
  const caller: Caller = { customerId: options.customer ?? 'operator', keyHash: null };
  // Checked before anything connects: a bad argument is a usage error, said at once.
  const input = asUsageError(() =>
    action === 'capture'
      ? { action: 'capture' as const, capture: parse(captureInput, { url: target, fullPage: options.fullPage === true }) }
      : { action: 'test' as const, test: parse(testInput, readSuite(target)) },
  );

  const config = loadConfig();
  const log = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  const pool = new BrowserPool({
    executablePath: config.vision.chromiumPath ?? resolveChromiumPath(),
    allowList: config.vision.allowedHosts,
    maxConcurrent: 1,
  });
  const rt = await createAppRuntime(config, log);
  const deps = visionDeps(rt, pool);
  const correlationId = `cli-${randomUUID()}`;
  try {
    if (input.action === 'capture') {
      const shot = await capturePage(deps, caller, input.capture, correlationId);
      const out = resolve(options.out ?? `${shot.answer.screenshotId}.png`);
      writeFileSync(out, shot.png);
      process.stdout.write(`${JSON.stringify({ ...shot.answer, file: out }, null, 2)}\n`);
      return EXIT.ok;
    }
    const run = await runTestSuite(deps, caller, input.test, correlationId);
    const reportUrl = `${deps.config.publicRagUrl}${reportPath(run.runId)}`;
    let reportFile: string | undefined;
    if (options.out) {
      reportFile = resolve(options.out);
      writeFileSync(reportFile, (await reviewPage(deps, caller, run.runId)).html);
    }
    process.stdout.write(`${JSON.stringify({ ...run, reportUrl, ...(reportFile ? { reportFile } : {}) }, null, 2)}\n`);
    return run.failed === 0 ? EXIT.ok : EXIT.failure;
  } catch (err) {
    if (err instanceof HttpError && err.status < 500) {
      process.stderr.write(`svc vision: ${err.message} (${err.code})\n`);
      return err.status === 404 ? EXIT.failure : EXIT.usage;
    }
    if (err instanceof HttpError) {
      process.stderr.write(`svc vision: ${err.message} (${err.code})\n`);
      return EXIT.unavailable;
    }
    throw err;
  } finally {
    await pool.close();
    await rt.close();
  }
}

function readSuite(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new UsageError(`${file} is not JSON`);
  }
}

/** The HTTP face's body check (`parse`: 400 with the first problem) as the CLI's usage error. */
function asUsageError<T>(check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof HttpError && err.status === 400) throw new UsageError(err.message);
    throw err;
  }
}
