import { readdirSync, readFileSync } from 'node:fs';
import { expect } from 'chai';
import { idleSchedulingPrefix } from '../../../services/platform/work/lower-priority.ts';
import { BrowserPool } from '../../../services/vision/browser/browser-pool.ts';
import { capture, type CaptureRequest, type CaptureResult } from '../../../services/vision/browser/capture.ts';
import { CaptureError } from '../../../services/vision/browser/capture-error.ts';
import { parseAllowList } from '../../../services/platform/allow-list.ts';
import { chromiumForTests, processGone } from './chromium-under-test.ts';
import { startFixtureSite, type FixtureSite } from './fixture-site.ts';

/** Polls a real condition (no fixed sleeps): resolves once `check` holds, fails after `ms`. */
async function until(what: string, check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('Browser pool (integration)', function () {
  this.timeout(60_000);
  let site: FixtureSite;
  let executablePath: string;
  const pools: BrowserPool[] = [];
  const newPool = (options: { maxConcurrent?: number; maxQueue?: number; closeTimeoutMs?: number } = {}) => {
    const pool = new BrowserPool({ executablePath, allowList: parseAllowList(`127.0.0.1:${site.port}`), ...options });
    pools.push(pool);
    return pool;
  };
  const request = (path: string): CaptureRequest => ({
    url: `${site.origin}${path}`,
    timeoutMs: 20_000,
    maxBytes: 1_000_000,
    viewport: { width: 320, height: 200 },
  });

  before(async function () {
    this.timeout(600_000); // a first run provisions Chromium
    executablePath = chromiumForTests();
    site = await startFixtureSite();
  });

  after(async () => {
    site?.releaseHeld();
    await Promise.all(pools.map((pool) => pool.close()));
    await site?.close();
  });

  it('runs the browser and every process it starts under SCHED_IDLE, which Chromium raising its own nice cannot undo', async function () {
    if (idleSchedulingPrefix().length === 0) this.skip(); // no chrt on this machine: nice 10 only
    const pool = newPool();
    expect((await capture(pool, request('/basic'))).title).to.equal('Vision fixture');
    const pid = await pool.browserPid();
    const browserProcesses = [pid as number, ...descendants(pid as number)];
    expect(browserProcesses.length).to.be.greaterThan(1);
    let threads = 0;
    for (const owner of browserProcesses) {
      for (const tid of readdirOrNone(`/proc/${owner}/task`)) {
        const stat = readOrNone(`/proc/${owner}/task/${tid}/stat`);
        if (stat === undefined) continue; // a helper process or thread that ended meanwhile
        // Field 41 (policy), counted after the command's closing parenthesis; SCHED_IDLE is 5.
        const policy = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[38]);
        expect(policy, `thread ${tid} of ${owner}`).to.equal(5);
        threads++;
      }
    }
    expect(threads).to.be.greaterThan(browserProcesses.length);
  });

  it('launches a new browser for the next request after the browser is killed', async () => {
    const pool = newPool();
    expect((await capture(pool, request('/basic'))).title).to.equal('Vision fixture');
    const pid = await pool.browserPid();
    expect(pid).to.be.a('number');
    process.kill(pid as number, 'SIGKILL');
    await until('the pool to see its browser gone', () => !pool.stats.connected);

    const again = await capture(pool, request('/basic'));
    expect(again.title).to.equal('Vision fixture');
    const newPid = await pool.browserPid();
    expect(newPid).to.be.a('number').and.not.equal(pid);
    expect(pool.stats.launches).to.equal(2);
    await until('the killed browser to be reaped', () => processGone(pid as number));
  });

  it('fails the captures in flight with BROWSER_FAILED when the browser dies under them', async () => {
    const pool = newPool();
    const pending = capture(pool, request('/hold/crash'));
    await site.whenHeld(1);
    process.kill((await pool.browserPid()) as number, 'SIGKILL');
    const error = await pending.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(CaptureError);
    expect((error as CaptureError).code).to.equal('BROWSER_FAILED');
    site.releaseHeld();
    expect((await capture(pool, request('/basic'))).title).to.equal('Vision fixture');
  });

  it('runs at most N captures at once, queues a bounded number and refuses the rest with POOL_BUSY', async () => {
    const pool = newPool({ maxConcurrent: 2, maxQueue: 1 });
    const heldBefore = site.maxHeld();
    expect(heldBefore).to.be.at.most(1);
    const running = [capture(pool, request('/hold/1')), capture(pool, request('/hold/2')), capture(pool, request('/hold/3'))];
    await site.whenHeld(2);
    expect(pool.stats).to.include({ active: 2, queued: 1 });

    const started = Date.now();
    const busy = await capture(pool, request('/basic')).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(busy).to.be.instanceOf(CaptureError);
    expect((busy as CaptureError).code).to.equal('POOL_BUSY');
    expect(Date.now() - started, 'refused at once, not after waiting').to.be.lessThan(1000);

    // Release the two running; the queued one then runs (and is released in turn).
    site.releaseHeld();
    await site.whenHeld(1); // the queued one, now running
    site.releaseHeld();
    const results: CaptureResult[] = await Promise.all(running);
    expect(results.map((r) => r.title)).to.deep.equal(['Released', 'Released', 'Released']);
    expect(site.maxHeld(), 'requests held at once').to.equal(2);
    expect(pool.stats).to.include({ active: 0, queued: 0, launches: 1 });
  });

  it('close() refuses new work, fails waiting work and leaves no browser process behind', async () => {
    const pool = newPool({ maxConcurrent: 1, maxQueue: 2, closeTimeoutMs: 2000 });
    const inFlight = capture(pool, request('/hold/close')).catch((e: unknown) => e);
    await site.whenHeld(1);
    const queued = capture(pool, request('/basic')).catch((e: unknown) => e);
    const pid = (await pool.browserPid()) as number;

    const started = Date.now();
    await pool.close();
    expect(Date.now() - started, 'close() is bounded').to.be.lessThan(5000);
    expect(((await queued) as CaptureError).code).to.equal('POOL_CLOSED');
    expect(await inFlight).to.be.instanceOf(Error);
    expect(((await capture(pool, request('/basic')).catch((e: unknown) => e)) as CaptureError).code).to.equal('POOL_CLOSED');
    await until('the browser process to be gone', () => processGone(pid));
    site.releaseHeld();
  });
});

/** Every live process below `pid` (from /proc: the browser's zygotes, renderers, GPU and network processes). */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    const child = Number(entry);
    if (!Number.isInteger(child)) continue;
    try {
      const stat = readFileSync(`/proc/${child}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), child]);
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const walk = (p: number) => {
    for (const child of children.get(p) ?? []) {
      found.push(child);
      walk(child);
    }
  };
  walk(pid);
  return found;
}

const readdirOrNone = (path: string): string[] => {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
};

const readOrNone = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};
