import type { Db } from 'mongodb';
import type { EventPublisher } from '../../events/publisher.ts';
import type { Config } from '../platform/config.ts';
import { Parts } from '../platform/parts.ts';
import type { Runtime } from '../platform/runtime.ts';
import { sharedPerRuntime, type Lease } from '../platform/shared-per-runtime.ts';
import { startProjection } from '../platform/wiring.ts';
import type { WorkPool } from '../platform/work/work-pool.ts';
import { analysesProjection } from './analyses.projection.ts';
import { baselinesProjection } from './baselines.projection.ts';
import type { CodeLinker } from './app/code-links.ts';
import { createImagePool } from './app/image-work.ts';
import { BlobStore } from './blob-store.ts';
import { BrowserPool } from './browser/browser-pool.ts';
import { resolveChromiumPath } from './browser/chromium-path.ts';
import { RetentionSweep } from './retention-sweep.ts';
import { screenshotsProjection } from './screenshots.projection.ts';
import { snapshotReviewsProjection } from './snapshot-reviews.projection.ts';
import { testRunsProjection } from './test-runs.projection.ts';

/** What the vision operations need; the HTTP face, the MCP tools and the CLI pass the same. */
export interface VisionDeps {
  db: Db;
  publisher: Pick<EventPublisher, 'publishOrdered'>;
  /** Where metered uses are recorded (usage.incremented). */
  usagePublisher: Pick<EventPublisher, 'publish'>;
  config: Pick<Config, 'vision' | 'urls' | 'ports'> & { publicRagUrl: string };
  pool: BrowserPool;
  /** Decoding and comparing images, off the serving event loop (app/image-work.ts). */
  images: WorkPool;
  blobs: BlobStore;
  /** Traces findings to the caller's code (app/code-links.ts); the faces that serve code give one. */
  codeLinker?: CodeLinker;
}

export interface VisionEngine {
  deps: VisionDeps;
  /** The browser can be launched here (installed and starting). */
  ready(): boolean;
}

/** The image pool of a process: one thread (image work is memory-heavy), the budgets of VISION_WORK_*. */
export const imagePoolOf = (config: Pick<Config, 'vision'>): WorkPool => createImagePool({ threads: 1, ...config.vision.work });

/**
 * The operations' dependencies over a runtime and a browser pool (the CLI builds its own pool). The
 * image pool is the engine's; without one, a pool is made here, whose idle threads do not keep the
 * process alive.
 */
export function visionDeps(
  rt: Pick<Runtime, 'mongo' | 'publisher' | 'config'>,
  pool: BrowserPool,
  images: WorkPool = imagePoolOf(rt.config),
): VisionDeps {
  const { config } = rt;
  return {
    db: rt.mongo.db,
    publisher: rt.publisher,
    usagePublisher: rt.publisher,
    config: { vision: config.vision, urls: config.urls, ports: config.ports, publicRagUrl: config.publicRagUrl },
    pool,
    images,
    blobs: new BlobStore(rt.mongo.db),
  };
}

const RETENTION_SWEEP_EVERY_MS = 60 * 60 * 1000;

/**
 * The browser pool, the image pool and the vision projections of a process, shared by its faces
 * (rag's HTTP API, the MCP server): one Chromium and one image thread per process, however many
 * faces use them; and the hourly retention sweep of old screenshots.
 */
export const leaseVisionEngine: (rt: Runtime) => Promise<Lease<VisionEngine>> = sharedPerRuntime(async (rt) => {
  const log = rt.log.child({ service: 'vision' });
  const parts = new Parts();
  const engine = await parts.starting(async () => {
    for (const projection of [
      screenshotsProjection,
      baselinesProjection,
      testRunsProjection,
      analysesProjection,
      snapshotReviewsProjection,
    ]) {
      parts.add(await startProjection(rt, log, projection));
    }
    const { vision } = rt.config;
    let browserProblem: string | null = null;
    let executablePath: string | undefined;
    try {
      executablePath = vision.chromiumPath ?? resolveChromiumPath();
    } catch (err) {
      browserProblem = (err as Error).message;
      log.warn({ problem: browserProblem }, 'no browser: the vision operations answer 503 and /health says degraded');
    }
    const pool = new BrowserPool({
      ...(executablePath ? { executablePath } : {}),
      allowList: vision.allowedHosts,
      maxConcurrent: vision.poolSize,
    });
    parts.onStop(() => pool.close());
    const images = imagePoolOf(rt.config);
    parts.onStop(() => images.close());
    const deps = visionDeps(rt, pool, images);
    await deps.blobs.ensureIndexes();
    const sweep = new RetentionSweep({
      db: deps.db,
      blobs: deps.blobs,
      log,
      retentionDays: vision.retentionDays,
      intervalMs: RETENTION_SWEEP_EVERY_MS,
    });
    sweep.start();
    parts.onStop(() => sweep.stop());
    return { deps, ready: () => browserProblem === null };
  });
  return { value: engine, stop: () => parts.stopAll((err) => log.error({ err }, 'vision engine: stop failed')) };
});
