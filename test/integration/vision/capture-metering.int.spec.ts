import { expect } from 'chai';
import type { Event } from '../../../events/envelope.ts';
import type { QuotaReport } from '../../../services/keys/assess.ts';
import { HttpError } from '../../../services/platform/http/errors.ts';
import { createAppRuntime } from '../../../app/runtime.ts';
import type { Runtime } from '../../../services/platform/runtime.ts';
import type { Caller } from '../../../services/premium/caller.ts';
import { capturePage } from '../../../services/vision/app/capture-page.ts';
import { runTestSuite } from '../../../services/vision/app/run-test-suite.ts';
import { BrowserPool } from '../../../services/vision/browser/browser-pool.ts';
import { parseAllowList } from '../../../services/platform/allow-list.ts';
import { visionDeps, type VisionDeps } from '../../../services/vision/engine.ts';
import { testInput } from '../../../services/vision/input.ts';
import { visionMetrics } from '../../../services/vision/metrics.ts';
import { testConfig, testLogger } from '../../support/env.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';
import { chromiumForTests } from './chromium-under-test.ts';
import { startFixtureSite, type FixtureSite } from './fixture-site.ts';

/**
 * Captures use the customer's `screenshotsAnalyzed`: a capture holds a browser slot for up to 30 s
 * and keeps megabytes, so it is admitted against the quota before it takes a slot and metered
 * (usage.incremented) once it succeeded, as analyses are. Real browser and stack; the usage events
 * are recorded here instead of reaching the keys service.
 */
describe('Captures are admitted and metered (integration)', function () {
  this.timeout(120_000);
  let rt: Runtime;
  let pool: BrowserPool;
  let site: FixtureSite;
  let deps: VisionDeps;
  const usage: Event[] = [];

  const quota = (used: number, limit: number): QuotaReport => ({
    queries: { used: 0, limit: -1, remaining: -1 },
    filesIndexed: { used: 0, limit: -1, remaining: -1 },
    screenshotsAnalyzed: { used, limit, remaining: limit === -1 ? -1 : Math.max(0, limit - used) },
  });
  const metered = (keyHash: string) =>
    usage
      .filter((e) => (e.data as { keyHash?: string }).keyHash === keyHash)
      .map((e) => [e.type, (e.data as { metric: string; amount: number }).metric, (e.data as { amount: number }).amount]);
  const asked = (path: string) => site.requests.filter((r) => r.path === path).length;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    const executablePath = chromiumForTests();
    site = await startFixtureSite();
    rt = await createAppRuntime(testConfig(await useStack()), testLogger());
    pool = new BrowserPool({ executablePath, allowList: parseAllowList(`127.0.0.1:${site.port}`), maxConcurrent: 2 });
    deps = { ...visionDeps(rt, pool), usagePublisher: { publish: async (event: Event) => void usage.push(event) } } as VisionDeps;
  });

  after(async () => {
    await (deps as { images?: { close(): Promise<void> } } | undefined)?.images?.close();
    await pool?.close();
    await site?.close();
    await rt?.mongo.db.dropDatabase().catch(() => undefined);
    await rt?.close();
  });

  it('meters each capture, and refuses one past the quota before the page is loaded', async () => {
    const caller: Caller = { customerId: 'cust-meter', keyHash: 'kh-meter', usage: quota(0, 2) };
    const capturedBefore = visionMetrics.captures.value({ source: 'capture', outcome: 'captured' });
    await capturePage(deps, caller, { url: `${site.origin}/basic`, fullPage: false }, 'corr-1');
    await capturePage(deps, caller, { url: `${site.origin}/basic`, fullPage: false }, 'corr-2');
    expect(metered('kh-meter')).to.deep.equal([
      ['usage.incremented', 'screenshotsAnalyzed', 1],
      ['usage.incremented', 'screenshotsAnalyzed', 1],
    ]);
    expect(visionMetrics.captures.value({ source: 'capture', outcome: 'captured' })).to.equal(capturedBefore + 2);

    caller.usage = quota(2, 2);
    const before = asked('/basic');
    const refused = await capturePage(deps, caller, { url: `${site.origin}/basic`, fullPage: false }, 'corr-3').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).to.be.instanceOf(HttpError);
    expect(refused).to.include({ status: 403, code: 'USAGE_EXCEEDED' });
    expect(asked('/basic'), 'the page was not loaded').to.equal(before);
    expect(metered('kh-meter')).to.have.length(2);
  });

  it('meters every capture of a test run, and refuses a run the quota has not room for', async () => {
    const caller: Caller = { customerId: 'cust-suite', keyHash: 'kh-suite', usage: quota(0, -1) };
    const suite = testInput.parse({
      url: `${site.origin}/analysis/clean`,
      testSuite: {
        name: 'two-shots',
        viewport: { width: 800, height: 600 },
        checks: [
          { type: 'visual', name: 'page' },
          { type: 'visual', name: 'whole', fullPage: true },
          { type: 'a11y', name: 'a11y' },
        ],
      },
    });
    const run = await runTestSuite(deps, caller, suite, 'corr-suite');
    expect(run.results.map((r) => r.status)).to.deep.equal(['passed', 'passed', 'passed']);
    // The page's capture, and the full-page check's own.
    expect(metered('kh-suite')).to.have.length(2);

    const tight: Caller = { customerId: 'cust-tight', keyHash: 'kh-tight', usage: quota(0, 1) };
    const before = asked('/analysis/clean');
    const refused = await runTestSuite(deps, tight, suite, 'corr-tight').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).to.include({ status: 403, code: 'USAGE_EXCEEDED' });
    expect(asked('/analysis/clean'), 'refused before any capture').to.equal(before);
    expect(metered('kh-tight')).to.deep.equal([]);
  });
});
