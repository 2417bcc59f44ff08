import { expect } from 'chai';
import { BrowserPool } from '../../../services/vision/browser/browser-pool.ts';
import { capture, type CaptureRequest } from '../../../services/vision/browser/capture.ts';
import { parseAllowList } from '../../../services/platform/allow-list.ts';
import { chromiumForTests } from './chromium-under-test.ts';
import { startFixtureSite, type FixtureSite } from './fixture-site.ts';

/**
 * Browser slots shared between customers in the real browser: a customer with a backlog of captures
 * (a suite of twenty 30-second captures) does not make another customer's one capture wait for all
 * of it. The fixture site holds each /hold/* page until the test releases it, so the order in which
 * pages are asked for is the order in which captures got a slot.
 */
describe('Browser slots shared fairly between customers (integration)', function () {
  this.timeout(120_000);
  let site: FixtureSite;
  let executablePath: string;
  const pools: BrowserPool[] = [];

  const request = (path: string, tenant: string): CaptureRequest => ({
    url: `${site.origin}${path}`,
    tenant,
    timeoutMs: 60_000,
    maxBytes: 1_000_000,
    viewport: { width: 320, height: 200 },
  });
  const held = () => site.requests.filter((r) => r.path.startsWith('/hold/')).map((r) => r.path.slice('/hold/'.length));

  /** Releases the page held now, then waits until the next capture holds one, `times` times. */
  const releaseInTurn = async (times: number) => {
    for (let i = 0; i < times; i++) {
      const before = held().length;
      site.releaseHeld();
      if (i < times - 1) {
        await site.whenHeld(1);
        expect(held().length).to.equal(before + 1);
      }
    }
  };

  before(async function () {
    this.timeout(600_000); // a first run provisions Chromium
    executablePath = chromiumForTests();
    site = await startFixtureSite();
  });

  after(async () => {
    await Promise.all(pools.map((p) => p.close()));
    await site?.close();
  });

  it("serves customer B's one capture before customer A's queued backlog", async () => {
    const pool = new BrowserPool({ executablePath, allowList: parseAllowList(`127.0.0.1:${site.port}`), maxConcurrent: 1 });
    pools.push(pool);
    const a = [capture(pool, request('/hold/a1', 'customer-a'))];
    await site.whenHeld(1); // a1 has the only slot
    for (const n of [2, 3, 4]) a.push(capture(pool, request(`/hold/a${n}`, 'customer-a')));
    const b = capture(pool, request('/hold/b1', 'customer-b'));
    expect(pool.stats).to.include({ active: 1, queued: 4 });

    await releaseInTurn(5);
    const titles = (await Promise.all([...a, b])).map((r) => r.title);
    expect(titles).to.deep.equal(['Released', 'Released', 'Released', 'Released', 'Released']);
    // a1 held the slot; b1 is next, not behind a2..a4.
    expect(held()).to.deep.equal(['a1', 'b1', 'a2', 'a3', 'a4']);
  });

  it("does not refuse customer B because customer A's waiting list is full", async () => {
    const pool = new BrowserPool({ executablePath, allowList: parseAllowList(`127.0.0.1:${site.port}`), maxConcurrent: 1, maxQueue: 2 });
    pools.push(pool);
    const start = site.requests.length;
    const a = [capture(pool, request('/hold/q-a1', 'customer-a'))];
    await site.whenHeld(1);
    a.push(capture(pool, request('/hold/q-a2', 'customer-a')), capture(pool, request('/hold/q-a3', 'customer-a')));
    const refused = await capture(pool, request('/hold/q-a4', 'customer-a')).then(
      () => null,
      (e: { code?: string }) => e.code,
    );
    expect(refused, "A's third waiting capture").to.equal('POOL_BUSY');
    const b = capture(pool, request('/hold/q-b1', 'customer-b'));
    expect(pool.stats).to.include({ active: 1, queued: 3 });
    await releaseInTurn(4);
    await Promise.all([...a, b]);
    expect(
      site.requests
        .slice(start)
        .filter((r) => r.path.startsWith('/hold/'))
        .map((r) => r.path),
    ).to.deep.equal(['/hold/q-a1', '/hold/q-b1', '/hold/q-a2', '/hold/q-a3']);
  });
});
