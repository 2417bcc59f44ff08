import { every } from '../platform/periodic.ts';
import type { Db, Document } from 'mongodb';
import { projectionCollection } from '../../events/collections.ts';
import type { Logger } from '../platform/logger.ts';
import { baselinesProjection } from './baselines.projection.ts';
import type { BlobStore } from './blob-store.ts';
import { screenshotsProjection } from './screenshots.projection.ts';

export interface RetentionDeps {
  db: Db;
  blobs: Pick<BlobStore, 'storedBefore' | 'delete'>;
  log: Logger;
  retentionDays: number;
  intervalMs: number;
  clock?: () => Date;
}

export interface SweepResult {
  blobsDeleted: number;
  screenshotsDeleted: number;
  /** Screenshots past the retention kept because a suite compares with them. */
  baselinesKept: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const PAGE = 500;

/**
 * Deletes what the vision operations stored longer ago than VISION_RETENTION_DAYS: screenshots
 * (PNG, DOM, page report), diff images, and blobs whose screenshot was never recorded (a capture
 * that failed between storing and publishing), except the screenshots a suite's visual checks use
 * as their baseline. A periodic pass of the vision engine's rather than a TTL index, which the core
 * path does not use; several processes may run it at once (deleting twice deletes once).
 *
 * A deleted screenshot's record becomes a tombstone (as a projection's own deletion would be), so
 * that it reads as absent everywhere instead of pointing at bytes that are gone.
 */
export class RetentionSweep {
  readonly #deps: RetentionDeps;
  #periodic: { stop(): Promise<void> } | undefined;

  constructor(deps: RetentionDeps) {
    this.#deps = deps;
  }

  /** Runs a first pass after `firstDelayMs`, then every intervalMs. */
  start(firstDelayMs = 60_000): void {
    const pass = async () => {
      const r = await this.runOnce();
      if (r.blobsDeleted > 0 || r.screenshotsDeleted > 0) this.#deps.log.info(r, 'vision retention: old screenshots deleted');
    };
    this.#periodic = every(this.#deps.intervalMs, pass, this.#deps.log, 'vision retention pass', { firstDelayMs });
  }

  async stop(): Promise<void> {
    await this.#periodic?.stop();
  }

  async runOnce(): Promise<SweepResult> {
    const { db, blobs } = this.#deps;
    const now = this.#deps.clock?.() ?? new Date();
    const cutoff = new Date(now.getTime() - this.#deps.retentionDays * DAY_MS);
    const { screenshotIds: baselineShots, blobIds: kept } = await this.#baselineBlobs();

    let blobsDeleted = 0;
    let after: { uploadDate: Date; id: string } | undefined;
    for (;;) {
      const page = await blobs.storedBefore(cutoff, PAGE, after);
      for (const blob of page) if (!kept.has(blob.id) && (await blobs.delete(blob.id))) blobsDeleted++;
      if (page.length < PAGE) break;
      after = page[page.length - 1];
    }

    const screenshots = await projectionCollection(db, screenshotsProjection.collection);
    let screenshotsDeleted = 0;
    let baselinesKept = 0;
    let batch: string[] = [];
    const tombstone = async () => {
      if (batch.length === 0) return;
      const done = await screenshots.updateMany({ _id: { $in: batch }, _deleted: { $ne: true } } as Document, { $set: { _deleted: true } });
      screenshotsDeleted += done.modifiedCount;
      batch = [];
    };
    for await (const shot of screenshots.find({ capturedAt: { $lt: cutoff }, _deleted: { $ne: true } } as Document, {
      projection: { _id: 1 },
    })) {
      const id = String(shot._id);
      if (baselineShots.has(id)) baselinesKept++;
      else batch.push(id);
      if (batch.length >= PAGE) await tombstone();
    }
    await tombstone();
    return { blobsDeleted, screenshotsDeleted, baselinesKept };
  }

  /** The screenshots every suite's baselines name, and their blobs: what retention keeps. */
  async #baselineBlobs(): Promise<{ screenshotIds: Set<string>; blobIds: Set<string> }> {
    const { db } = this.#deps;
    const baselines = await projectionCollection(db, baselinesProjection.collection);
    const screenshotIds = new Set<string>();
    for await (const b of baselines.find({ _deleted: { $ne: true } } as Document, { projection: { screenshotId: 1 } })) {
      if (typeof b.screenshotId === 'string') screenshotIds.add(b.screenshotId);
    }
    const blobIds = new Set<string>();
    const screenshots = await projectionCollection(db, screenshotsProjection.collection);
    const ids = [...screenshotIds];
    for (let i = 0; i < ids.length; i += 1000) {
      for await (const s of screenshots.find({ _id: { $in: ids.slice(i, i + 1000) } } as Document, { projection: { blobs: 1 } })) {
        const named = (s.blobs ?? {}) as Record<string, unknown>;
        for (const id of [named.png, named.dom, named.report]) if (typeof id === 'string') blobIds.add(id);
      }
    }
    return { screenshotIds, blobIds };
  }
}
