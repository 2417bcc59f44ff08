import { expect } from 'chai';
import { ObjectId, type Document } from 'mongodb';
import { projectionCollection } from '../../../events/collections.ts';
import { newEvent } from '../../../events/envelope.ts';
import { publishAndApply } from '../../../events/own-events.ts';
import { HttpError } from '../../../services/platform/http/errors.ts';
import { createAppRuntime } from '../../../app/runtime.ts';
import type { Runtime } from '../../../services/platform/runtime.ts';
import { capturePage } from '../../../services/vision/app/capture-page.ts';
import { deleteDiff, deleteScreenshot } from '../../../services/vision/app/delete-stored.ts';
import { screenshotPng } from '../../../services/vision/app/read-image.ts';
import type { VisionCaller } from '../../../services/vision/app/storage-limit.ts';
import { baselinesProjection } from '../../../services/vision/baselines.projection.ts';
import { BrowserPool } from '../../../services/vision/browser/browser-pool.ts';
import { parseAllowList } from '../../../services/platform/allow-list.ts';
import { visionDeps, type VisionDeps } from '../../../services/vision/engine.ts';
import type { BaselineAccepted } from '../../../services/vision/events.ts';
import { RetentionSweep } from '../../../services/vision/retention-sweep.ts';
import { screenshotsProjection } from '../../../services/vision/screenshots.projection.ts';
import { testConfig, testLogger } from '../../support/env.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';
import { chromiumForTests } from './chromium-under-test.ts';
import { startFixtureSite, type FixtureSite } from './fixture-site.ts';

/**
 * What captures keep in GridFS is bounded per customer (by tier) and does not stay for ever: a
 * capture past the bound is refused with how to free space, and the engine's sweep deletes
 * screenshots past the retention, except those a suite compares with. Real browser and stack.
 */
describe('Stored screenshots: per-customer bound and retention (integration)', function () {
  this.timeout(120_000);
  let rt: Runtime;
  let pool: BrowserPool;
  let site: FixtureSite;
  let deps: VisionDeps;
  const MB = 1024 * 1024;

  const failureOf = (promise: Promise<unknown>): Promise<unknown> =>
    promise.then(
      () => undefined,
      (e: unknown) => e,
    );
  const shoot = (caller: VisionCaller, path = '/basic') =>
    capturePage(deps, caller, { url: `${site.origin}${path}`, fullPage: false }, 'corr-store');

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    const executablePath = chromiumForTests();
    site = await startFixtureSite();
    // The smallest bounds the configuration takes: a megabyte for pro, two for team.
    rt = await createAppRuntime(testConfig(await useStack(), { VISION_STORAGE_MB_PRO: '1', VISION_STORAGE_MB_TEAM: '2' }), testLogger());
    pool = new BrowserPool({ executablePath, allowList: parseAllowList(`127.0.0.1:${site.port}`), maxConcurrent: 2 });
    deps = { ...visionDeps(rt, pool), usagePublisher: { publish: async () => undefined } };
    await deps.blobs.ensureIndexes();
  });

  after(async () => {
    await deps?.images.close();
    await pool?.close();
    await site?.close();
    await rt?.mongo.db.dropDatabase().catch(() => undefined);
    await rt?.close();
  });

  it("refuses a capture past the customer's bound with how to free space, and takes it once space is freed", async () => {
    const pro: VisionCaller = { customerId: 'cust-full', keyHash: 'kh-full', tier: 'pro' };
    await shoot(pro);
    // A diff image of 1.1 MB takes the customer past its megabyte.
    const diffId = await deps.blobs.put(Buffer.alloc(1.1 * MB, 1), { customerId: pro.customerId, kind: 'diff', contentType: 'image/png' });
    const before = site.requests.length;
    const refused = await failureOf(shoot(pro));
    expect(refused).to.be.instanceOf(HttpError);
    expect(refused).to.include({ status: 403, code: 'STORAGE_LIMIT_REACHED' });
    expect((refused as HttpError).message)
      .to.match(/DELETE \/api\/glm\/screenshots\/\{id\}/)
      .and.match(/30 days/);
    expect((refused as HttpError).details).to.include({ limitBytes: MB, retentionDays: 30 });
    expect(site.requests.length, 'refused before the page was loaded').to.equal(before);

    // Another customer is not bounded by this one's storage; a team key has more room.
    await shoot({ customerId: 'cust-other', keyHash: 'kh-other', tier: 'pro' });
    await shoot({ ...pro, tier: 'team' });

    expect(await deleteDiff(deps, { customerId: 'cust-other', keyHash: 'kh-other' }, diffId).catch((e: HttpError) => e.status)).to.equal(
      404,
    );
    await deleteDiff(deps, pro, diffId);
    await shoot(pro);
  });

  it('deletes a screenshot on request, but not one a suite compares with', async () => {
    const caller: VisionCaller = { customerId: 'cust-delete', keyHash: 'kh-delete', tier: 'team' };
    const [kept, dropped] = [(await shoot(caller)).answer.screenshotId, (await shoot(caller)).answer.screenshotId];
    const baseline: BaselineAccepted = newEvent('glm.baseline-accepted', {
      customerId: caller.customerId,
      suite: 's',
      check: 'c',
      screenshotId: kept,
      reason: 'accepted',
    });
    await publishAndApply(deps.publisher, deps.db, baselinesProjection, [baseline]);

    expect(await failureOf(deleteScreenshot(deps, caller, kept))).to.include({ status: 409, code: 'BASELINE_IN_USE' });
    expect(await failureOf(deleteScreenshot(deps, { customerId: 'cust-other', keyHash: 'kh-other' }, dropped))).to.include({ status: 404 });
    const used = await deps.blobs.usedBytes(caller.customerId);
    await deleteScreenshot(deps, caller, dropped);
    expect(await deps.blobs.usedBytes(caller.customerId)).to.be.lessThan(used);
    expect(await failureOf(screenshotPng(deps, caller, dropped))).to.include({ status: 404 });
    expect((await screenshotPng(deps, caller, kept)).length).to.be.greaterThan(0);
  });

  it('sweeps screenshots older than the retention, keeping the baselines and everything recent', async () => {
    const caller: VisionCaller = { customerId: 'cust-old', keyHash: 'kh-old', tier: 'team' };
    const [baseline, old, recent] = [
      (await shoot(caller)).answer.screenshotId,
      (await shoot(caller)).answer.screenshotId,
      (await shoot(caller)).answer.screenshotId,
    ];
    const accepted: BaselineAccepted = newEvent('glm.baseline-accepted', {
      customerId: caller.customerId,
      suite: 'old-suite',
      check: 'page',
      screenshotId: baseline,
      reason: 'first_run',
    });
    await publishAndApply(deps.publisher, deps.db, baselinesProjection, [accepted]);
    const orphan = await deps.blobs.put(Buffer.from('a capture whose event was never published'), {
      customerId: caller.customerId,
      kind: 'png',
      contentType: 'image/png',
    });

    // Forty days pass for all but the recent capture.
    const longAgo = new Date(Date.now() - 40 * 24 * 3600 * 1000);
    const screenshots = await projectionCollection(deps.db, screenshotsProjection.collection);
    const aged = (await screenshots.find({ _id: { $in: [baseline, old] } } as Document).toArray()) as unknown as {
      blobs: Record<string, string>;
    }[];
    const agedBlobs = [...aged.flatMap((s) => Object.values(s.blobs)), orphan];
    await screenshots.updateMany({ _id: { $in: [baseline, old] } } as Document, { $set: { capturedAt: longAgo } });
    await deps.db
      .collection('vision_blobs.files')
      .updateMany({ _id: { $in: agedBlobs.map((id) => new ObjectId(id)) } }, { $set: { uploadDate: longAgo } });

    const sweep = new RetentionSweep({ db: deps.db, blobs: deps.blobs, log: testLogger(), retentionDays: 30, intervalMs: 3_600_000 });
    const swept = await sweep.runOnce();
    expect(swept.screenshotsDeleted).to.be.at.least(1);
    expect(swept.baselinesKept).to.be.at.least(1);
    expect(swept.blobsDeleted).to.be.at.least(4); // the old screenshot's three, and the orphan

    expect(await failureOf(screenshotPng(deps, caller, old))).to.include({ status: 404 });
    expect(await deps.blobs.get(orphan)).to.equal(null);
    expect((await screenshotPng(deps, caller, baseline)).length, 'the baseline is kept').to.be.greaterThan(0);
    expect((await screenshotPng(deps, caller, recent)).length, 'the recent one is kept').to.be.greaterThan(0);
    expect((await sweep.runOnce()).blobsDeleted, 'a second pass finds nothing more').to.equal(0);
  });
});
