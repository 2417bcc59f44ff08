import { idleSchedulingPrefix, lowerChildPriority } from '../../platform/work/lower-priority.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type LaunchOptions } from 'playwright-core';
import { CaptureError, isCaptureError } from './capture-error.ts';
import { CHROMIUM_ARGS, IGNORED_DEFAULT_ARGS, sandboxByDefault } from './chromium-args.ts';
import { resolveChromiumPath } from './chromium-path.ts';
import { openGuardedContext, type ContextViewport, type GuardedContext } from './guarded-context.ts';
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
  readonly viewport: ContextViewport;
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
  /** The process running Playwright's server for it (browser-server.ts). */
  readonly server: ChildProcess;
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
      const running = await this.#browser(options.deadline);
      const { browser } = running;
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
        await this.#discard(running);
        throw new CaptureError('BROWSER_FAILED', 'the browser did not open a context', { cause: error });
      });
      this.#leases.add(lease);
      return await this.#untilDeadline(work(lease), lease, options.deadline, running);
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
    await this.#discard(running, bound);
  }

  async #untilDeadline<T>(work: Promise<T>, lease: GuardedContext, deadline: number, running: RunningBrowser): Promise<T> {
    const { browser } = running;
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
      // The page's own error can arrive before the server's word that the browser is gone.
      const browserGone = !browser.isConnected() || (running.pid !== undefined && !alive(running.pid));
      if ((!isCaptureError(error) || isCaptureError(error, 'NAVIGATION_FAILED')) && browserGone) {
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
      // The server's word that its browser died can come after the death itself: look at the process too.
      if (running?.browser.isConnected() && (running.pid === undefined || alive(running.pid))) return running;
      if (running) void this.#discard(running);
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
    const started = await startBrowserServer(
      {
        executablePath: this.#options.executablePath ?? resolveChromiumPath(),
        headless: true,
        chromiumSandbox: this.#options.sandbox ?? sandboxByDefault(),
        args: [...CHROMIUM_ARGS],
        ignoreDefaultArgs: [...IGNORED_DEFAULT_ARGS],
        timeout: timeoutMs,
      },
      timeoutMs,
    );
    let browser: Browser;
    try {
      browser = await chromium.connect(started.wsEndpoint, { timeout: timeoutMs });
    } catch (error) {
      killGroup(started.pid);
      started.server.kill('SIGKILL');
      throw new CaptureError('BROWSER_FAILED', `Chromium did not start: ${firstLine(error)}`, { cause: error });
    }
    // The browser renders customers' pages: it and its server run below the loop that answers everyone
    // (SCHED_IDLE from the start where chrt exists; nice 10 besides, for where it does not).
    lowerChildPriority(10, (command) => /chrom|headless_shell/i.test(command));
    try {
      if (started.server.pid !== undefined) setPriority(started.server.pid, 10);
    } catch {
      // not allowed here: it runs at our priority
    }
    const running: RunningBrowser = { browser, pid: started.pid, server: started.server };
    // The next request sees isConnected() false and launches anew; the server goes with its browser.
    browser.on('disconnected', () => {
      if (this.#current === running) this.#current = undefined;
      running.server.kill('SIGKILL');
    });
    if (this.#closed) {
      await this.#discard(running);
      throw new CaptureError('POOL_CLOSED', 'the browser pool closed during launch');
    }
    this.#current = running;
    return running;
  }

  async #discard(running: RunningBrowser, boundMs = 1000): Promise<void> {
    // A connected browser's close() only disconnects: its server closes the browser when told to go.
    if (running.browser.isConnected() && running.server.exitCode === null) await within(running.browser.close(), boundMs);
    running.server.kill('SIGTERM');
    const exited = new Promise<void>((resolve) =>
      running.server.exitCode !== null ? resolve() : running.server.once('exit', () => resolve()),
    );
    if (!(await within(exited, boundMs))) running.server.kill('SIGKILL');
    // The browser is its server's child, in a process group of its own: make sure it is gone too.
    if (!(await within(untilGone(running.pid), boundMs))) {
      killGroup(running.pid);
      await within(untilGone(running.pid), boundMs);
    }
  }
}

const SERVER_SCRIPT = fileURLToPath(new URL('./browser-server.ts', import.meta.url));

/** Starts browser-server.ts and reads its first line: where to connect, and the browser's pid. */
async function startBrowserServer(
  options: LaunchOptions,
  timeoutMs: number,
): Promise<{ wsEndpoint: string; pid: number | undefined; server: ChildProcess }> {
  // The server and its browser run under SCHED_IDLE where chrt exists (chrt execs: the pid is the server's).
  const [command = process.execPath, ...args] = [
    ...idleSchedulingPrefix(),
    process.execPath,
    '--disable-warning=TimeoutNegativeWarning',
    SERVER_SCRIPT,
    JSON.stringify(options),
  ];
  const server = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  server.stderr.on('data', (chunk: Buffer) => {
    if (stderr.length < 4000) stderr += chunk.toString('utf8');
  });
  const first = new Promise<{ wsEndpoint: string; pid: number | undefined }>((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) resolve(JSON.parse(line) as { wsEndpoint: string; pid: number | undefined });
    });
    server.once('exit', (code) => reject(new Error(`the browser server exited with ${code}: ${firstLine(stderr)}`)));
    server.once('error', reject);
  });
  try {
    return { ...(await withTimeout(first, timeoutMs, 'starting Chromium')), server };
  } catch (error) {
    server.kill('SIGKILL');
    throw new CaptureError('BROWSER_FAILED', `Chromium did not start: ${firstLine(error)}`, { cause: error });
  }
}

/** Alive, and not a zombie waiting for its parent. */
function alive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

/** Resolves once the process is gone (polled: it is not our child to wait on). */
async function untilGone(pid: number | undefined, withinMs = 10_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (alive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
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
