import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { PNG } from 'pngjs';
import { HttpError } from '../../../services/platform/http/errors.ts';
import { createAppRuntime } from '../../../app/runtime.ts';
import type { Runtime } from '../../../services/platform/runtime.ts';
import { WorkPool } from '../../../services/platform/work/work-pool.ts';
import { analyzeScreenshot } from '../../../services/vision/app/analyze-screenshot.ts';
import { BrowserPool } from '../../../services/vision/browser/browser-pool.ts';
import { parseAllowList } from '../../../services/platform/allow-list.ts';
import { visionDeps, type VisionDeps } from '../../../services/vision/engine.ts';
import type { AnalyzeInput } from '../../../services/vision/input.ts';
import { testConfig, testLogger } from '../../support/env.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';
import { zeroPng } from './bomb-png.ts';
import { chromiumForTests } from './chromium-under-test.ts';

/**
 * An image given by URL (`screenshotUrl`) against the real browser and stack: a decompression bomb
 * is refused from its header, before anything decodes it, and the decoding and analysis of an
 * accepted image run on the image pool, within its budget.
 */

/** A white 400×300 image with a dark bar at the top. */
function smallPng(): Buffer {
  const png = new PNG({ width: 400, height: 300 });
  for (let i = 0; i < png.data.length; i += 4) {
    const y = Math.floor(i / 4 / 400);
    png.data.fill(y < 40 ? 20 : 255, i, i + 3);
    png.data[i + 3] = 255;
  }
  return PNG.sync.write(png);
}

/**
 * Not an image: a page whose script makes the document look like one image and its canvas hand back
 * the bomb, the way a page's own script can answer whatever a script of ours asks it in its world.
 */
const lyingPage = (png: Buffer): string => `<!doctype html><title>not an image</title><script>
  const fake = { complete: true, naturalWidth: 1, naturalHeight: 1 };
  Object.defineProperty(Document.prototype, 'contentType', { get: () => 'image/png' });
  Object.defineProperty(Document.prototype, 'images', { get: () => [fake] });
  const canvas = { width: 0, height: 0, getContext: () => ({ drawImage() {} }), toDataURL: () => 'data:image/png;base64,${png.toString('base64')}' };
  const create = Document.prototype.createElement;
  Document.prototype.createElement = function (name, options) { return name === 'canvas' ? canvas : create.call(this, name, options); };
</script>`;

const failureOf = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => undefined,
    (e: unknown) => e,
  );

/** Peak resident memory of this process so far, in MB (getrusage: it never goes down). */
const peakRssMb = (): number => process.resourceUsage().maxRSS / 1024;

describe('Images given by URL: header checks and the image pool (integration)', function () {
  this.timeout(120_000);
  let rt: Runtime;
  let pool: BrowserPool;
  let deps: VisionDeps;
  let images: Server;
  let origin: string;
  const caller = { customerId: 'cust-images', keyHash: null };
  const analyze = (input: Partial<AnalyzeInput>, on: VisionDeps = deps) =>
    analyzeScreenshot(on, caller, { analysisType: 'visual-bugs', fullPage: false, ...input } as AnalyzeInput, 'corr-images');

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    const executablePath = chromiumForTests();
    const bomb = await zeroPng(10_000, 10_000);
    const small = smallPng();
    images = createServer((req, res) => {
      if (req.url === '/bomb.png') res.writeHead(200, { 'content-type': 'image/png' }).end(bomb);
      else if (req.url === '/lying.html') res.writeHead(200, { 'content-type': 'text/html' }).end(lyingPage(bomb));
      else if (req.url === '/small.png') res.writeHead(200, { 'content-type': 'image/png' }).end(small);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(images.address() as AddressInfo).port}`;
    rt = await createAppRuntime(testConfig(await useStack()), testLogger());
    pool = new BrowserPool({ executablePath, allowList: parseAllowList(origin.replace('http://', '')), maxConcurrent: 2 });
    deps = visionDeps(rt, pool);
  });

  after(async () => {
    await deps?.images?.close();
    await pool?.close();
    await new Promise<void>((resolve) => (images ? images.close(() => resolve()) : resolve()));
    await rt?.mongo.db.dropDatabase().catch(() => undefined);
    await rt?.close();
  });

  it('refuses a 10000×10000 PNG that a lying document hands over, quickly and without decoding it', async () => {
    const peakBefore = peakRssMb();
    const started = Date.now();
    const error = await failureOf(analyze({ screenshotUrl: `${origin}/lying.html` }));
    const took = Date.now() - started;
    expect(error, 'refused').to.be.instanceOf(HttpError);
    expect(error).to.include({ status: 422, code: 'NOT_AN_IMAGE' });
    expect(took, 'refused without decoding 100 megapixels').to.be.lessThan(10_000);
    // Decoding it would hold 400 MB of pixels and as much of inflated rows.
    expect(peakRssMb() - peakBefore, 'MB of peak memory the request added').to.be.lessThan(200);
  });

  it('refuses a real 10000×10000 PNG by URL with 413 IMAGE_TOO_LARGE naming the limit', async () => {
    const peakBefore = peakRssMb();
    const error = await failureOf(analyze({ screenshotUrl: `${origin}/bomb.png` }));
    expect(error).to.be.instanceOf(HttpError);
    expect(error).to.include({ status: 413, code: 'IMAGE_TOO_LARGE' });
    expect((error as HttpError).message).to.match(/10000×10000.*40 megapixels/);
    expect((error as HttpError).details).to.include({ maxPixels: 40_000_000 });
    expect(peakRssMb() - peakBefore).to.be.lessThan(200);
  });

  it('analyses an accepted image on the image pool, not on the event loop', async () => {
    expect(deps.images.stats().threads, 'no image work yet').to.equal(0);
    const answer = await analyze({ screenshotUrl: `${origin}/small.png` });
    expect(answer.checksRun).to.include('blank-region');
    expect(deps.images.stats().threads, 'the analysis started an image thread').to.equal(1);
  });

  it("answers 422 when the analysis runs past the pool's time budget, not 500", async () => {
    const strict = new WorkPool({ name: 'images', threads: 1, memoryMb: 512, timeoutMs: 1, queuePerTenant: 8 });
    try {
      const error = await failureOf(analyze({ screenshotUrl: `${origin}/small.png` }, { ...deps, images: strict }));
      expect(error).to.be.instanceOf(HttpError);
      expect(error).to.include({ status: 422, code: 'IMAGE_WORK_OVER_BUDGET' });
      expect((error as HttpError).details).to.deep.equal({ budget: 'time' });
    } finally {
      await strict.close();
    }
  });
});
