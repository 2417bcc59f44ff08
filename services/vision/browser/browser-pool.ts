import { lowerChildPriority } from '../../platform/work/lower-priority.ts';
import { chromium, type Browser } from 'playwright-core';
import { CaptureError, isCaptureError } from './capture-error.ts';
import { CHROMIUM_ARGS, IGNORED_DEFAULT_ARGS, sandboxByDefault } from './chromium-args.ts';
import { resolveChromiumPath } from './chromium-path.ts';
import { openGuardedContext, type GuardedContext } from './guarded-context.ts';
import { SlotQueue } from './slot-queue.ts';
import { parseAllowList, type AllowList } from '../../platform/allow-list.ts';
import { hostReason, SsrfGuard, type Lookup, type Target } from './ssrf-guard.ts';
import { within, withTimeout } from './time-bounds.ts';

/**
 * One Chromium process shared by up to `maxConcurrent` captures, each in a context of its own behind
 * the SSRF guard, its slots shared fairly between customers (slot-queue.ts). The browser is launched on first use and again after it crashes or disconnects; a
 * context that the browser fails to open in time marks it wedged, and it is killed and replaced.
 * The pool hands out only guarded contexts: code built on it cannot open an unguarded one.
 */

export interface BrowserPoolOptions {
  /** Default: resolveChromiumPath() (CHROMIUM_PATH, else the provisioned cache), on first launch. */
  readonly executablePath?: string;
  /** Hosts a capture may reach although private (default: parsed CAPTURE_ALLOWED_HOSTS). */
  readonly allowList?: AllowList;
  /** DNS for the guard; tests substitute their own. */
  readonly lookup?: Lookup;
  readonly maxConcurrent?: number;
  /** Captures one customer may have waiting for a slot (default 8). */
  readonly maxQueue?: number;
  /** Slots one customer may hold while another waits (default: half of maxConcurrent, at least 1). */
  readonly maxPerCustomer?: number;
  readonly launchTimeoutMs?: number;
  readonly closeTimeoutMs?: number;
  /** Chromium's sandbox; default on except as root, where Chromium cannot start with it. */
  readonly sandbox?: boolean;
}

export interface LeaseOptions {
  /** Epoch milliseconds by which the work, waiting for a slot included, must be done. */
  readonly deadline: number;
  /** Whose work (a customer id): slots are shared round-robin between customers. Default: one shared tenant. */
  readonly tenant?: string;
  readonly maxBytes: number;
  readonly viewport: { readonly width: number; readonly height: number };
}

export interface PoolStats {
  readonly active: number;
  readonly queued: number;
  readonly launches: number;
  readonly connected: boolean;
}

interface RunningBrowser {
  readonly browser: Browser;
  /** The browser process (leader of its process group: Playwright starts it detached). */
  readonly pid: number | undefined;
}

export class BrowserPool {
  readonly #options: BrowserPoolOptions;
  readonly #slots: SlotQueue;
  readonly #allowList: AllowList;
  readonly #leases = new Set<GuardedContext>();
  /** The browser in use or being launched (single flight: concurrent first requests share one launch). */
  #running: Promise<RunningBrowser> | undefined;
  #current: RunningBrowser | undefined;
  #launches = 0;
  #closed = false;

  constructor(options: BrowserPoolOptions = {}) {
    this.#options = options;
    const slots = options.maxConcurrent ?? 2;
    this.#slots = new SlotQueue(slots, options.maxQueue ?? 8, options.maxPerCustomer ?? Math.max(1, Math.ceil(slots / 2)));
    this.#allowList = options.allowList ?? parseAllowList(process.env.CAPTURE_ALLOWED_HOSTS);
  }

  get stats(): PoolStats {
    return {
      active: this.#slots.held,
      queued: this.#slots.queued,
      launches: this.#launches,
      connected: this.#current?.browser.isConnected() ?? false,
    };
  }

  /**
   * Why the guard would refuse this target without asking DNS (a private address literal, an
   * internal name), or undefined. Asked before run(): such a refusal needs no slot and no context.
   */
  refusalWithoutDns(target: Target): string | undefined {
    return hostReason(this.#allowList, target.host, target.port);
  }

  /**
   * Runs `work` in a fresh guarded context once a slot is free, and closes the context afterwards.
   * Past the deadline the context is closed under the work and TIMEOUT is thrown.
   */
  async run<T>(options: LeaseOptions, work: (lease: GuardedContext) => Promise<T>): Promise<T> {
    if (this.#closed) throw new CaptureError('POOL_CLOSED', 'the browser pool is closed');
    const release = await this.#slots.acquire(options.deadline - Date.now(), options.tenant);
    let lease: GuardedContext | undefined;
    try {
      const { browser, pid } = await this.#browser(options.deadline);
      const guard = new SsrfGuard(
        this.#options.lookup ? { allowList: this.#allowList, lookup: this.#options.lookup } : { allowList: this.#allowList },
      );
      lease = await openGuardedContext(browser, {
        guard,
        maxBytes: options.maxBytes,
        viewport: options.viewport,
        timeoutMs: Math.max(1, Math.min(10_000, options.deadline - Date.now())),
      }).catch(async (error: unknown) => {
        if (options.deadline - Date.now() <= 0)
          throw new CaptureError('TIMEOUT', 'the capture timed out while opening a browser context', { cause: error });
        // A browser that cannot open a context in time is wedged: replace it.
        await this.#discard(browser, pid);
        throw new CaptureError('BROWSER_FAILED', 'the browser did not open a context', { cause: error });
      });
      this.#leases.add(lease);
      return await this.#untilDeadline(work(lease), lease, options.deadline, browser);
    } finally {
      if (lease !== undefined) {
        this.#leases.delete(lease);
        await lease.close(this.#options.closeTimeoutMs ?? 5000);
      }
      release();
    }
  }

  /** Process id of the current browser, if one is running (for operations and tests). */
  async browserPid(): Promise<number | undefined> {
    const running = await this.#running?.catch(() => undefined);
    return running?.pid;
  }

  /** Refuses waiting and new requests, closes every context and the browser; kills it past the bound. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#slots.close();
    const bound = this.#options.closeTimeoutMs ?? 5000;
    await Promise.all([...this.#leases].map((lease) => lease.close(bound)));
    // A launch still under way is not waited for past the bound: it sees #closed and discards its browser.
    const launched = this.#running;
    this.#running = undefined;
    let running: RunningBrowser | undefined;
    await within(launched?.then((r) => (running = r)) ?? Promise.resolve(), bound);
    if (running === undefined) return;
    if (!(await within(running.browser.close(), bound))) killGroup(running.pid);
  }

  async #untilDeadline<T>(work: Promise<T>, lease: GuardedContext, deadline: number, browser: Browser): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => {
          reject(new CaptureError('TIMEOUT', 'the capture did not finish in time'));
          // Closing the context makes every pending call of the work fail fast.
          void lease.close(this.#options.closeTimeoutMs ?? 5000);
        },
        Math.max(0, deadline - Date.now()),
      );
    });
    work.catch(() => undefined); // once the deadline has answered, the work's own failure is moot
    try {
      return await Promise.race([work, expired]);
    } catch (error) {
      if (!isCaptureError(error) && !browser.isConnected()) {
        throw new CaptureError('BROWSER_FAILED', 'the browser crashed or disconnected during the capture', { cause: error });
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  async #browser(deadline: number): Promise<RunningBrowser> {
    const current = this.#running;
    if (current !== undefined) {
      const running = await current.catch(() => undefined);
      if (running?.browser.isConnected()) return running;
      if (this.#running === current) this.#running = undefined;
      if (this.#running !== undefined) return this.#browser(deadline);
    }
    if (this.#closed) throw new CaptureError('POOL_CLOSED', 'the browser pool is closed');
    const launching = this.#launch(Math.max(1, Math.min(this.#options.launchTimeoutMs ?? 30_000, deadline - Date.now())));
    this.#running = launching;
    launching.catch(() => {
      if (this.#running === launching) this.#running = undefined;
    });
    return launching;
  }

  async #launch(timeoutMs: number): Promise<RunningBrowser> {
    this.#launches++;
    let browser: Browser;
    try {
      browser = await chromium.launch({
        executablePath: this.#options.executablePath ?? resolveChromiumPath(),
        headless: true,
        chromiumSandbox: this.#options.sandbox ?? sandboxByDefault(),
        args: [...CHROMIUM_ARGS],
        ignoreDefaultArgs: [...IGNORED_DEFAULT_ARGS],
        timeout: timeoutMs,
        // The pool closes the browser itself (bounded); signals reach the service, which closes the pool.
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
      });
    } catch (error) {
      if (isCaptureError(error)) throw error;
      throw new CaptureError('BROWSER_FAILED', `Chromium did not start: ${firstLine(error)}`, { cause: error });
    }
    // The browser renders customers' pages: it runs below the loop that answers everyone.
    lowerChildPriority(10, (command) => /chrom|headless_shell/i.test(command));
    const running: RunningBrowser = { browser, pid: await browserPid(browser) };
    // The next request sees isConnected() false and launches anew; nothing else to reset here.
    browser.on('disconnected', () => {
      if (this.#current === running) this.#current = undefined;
    });
    if (this.#closed) {
      await this.#discard(browser, running.pid);
      throw new CaptureError('POOL_CLOSED', 'the browser pool closed during launch');
    }
    this.#current = running;
    return running;
  }

  async #discard(browser: Browser, pid: number | undefined): Promise<void> {
    if (!(await within(browser.close(), 1000))) killGroup(pid);
  }
}

/** Asks the browser its own process id (CDP SystemInfo): Playwright's launch() does not expose it. */
async function browserPid(browser: Browser): Promise<number | undefined> {
  const ask = async () => {
    const session = await browser.newBrowserCDPSession();
    const { processInfo } = await session.send('SystemInfo.getProcessInfo');
    await session.detach().catch(() => undefined);
    return processInfo.find((p) => p.type === 'browser')?.id;
  };
  // Without the pid, close() cannot kill a browser that will not close; everything else still works.
  return withTimeout(ask(), 5000, 'asking the browser its process id').catch(() => undefined);
}

/** SIGKILL to the browser's process group; only ever a group this pool started. */
function killGroup(pid: number | undefined): void {
  if (pid === undefined || pid <= 1) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

const firstLine = (error: unknown): string => (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
