import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { CHROMIUM_ARGS, sandboxByDefault } from '../../../services/vision/browser/chromium-args.ts';
import { resolveChromiumPath } from '../../../services/vision/browser/chromium-path.ts';

/**
 * The browser the integration tests launch: CHROMIUM_PATH or the provisioned one. When neither is
 * there (install.sh not yet provisioning Chromium, or a clean cache) the provision step runs here.
 */
export function chromiumForTests(): string {
  try {
    return resolveChromiumPath();
  } catch (error) {
    if (process.env.CHROMIUM_PATH) throw error;
    const script = fileURLToPath(new URL('../../../deploy/local/chromium/provision.sh', import.meta.url));
    execFileSync('bash', [script], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 600_000 });
    return resolveChromiumPath();
  }
}

/** The test browser, headless, with the platform's own flags (and its sandbox unless run as root). */
export function launchChromiumForTests(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumForTests(),
    headless: true,
    chromiumSandbox: sandboxByDefault(),
    args: [...CHROMIUM_ARGS],
  });
}

/** Whether a process id is gone (or a zombie no one has reaped yet, which holds no resources). */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}
