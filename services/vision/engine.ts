import type { Db } from 'mongodb';
import type { EventPublisher } from '../../events/publisher.ts';
import type { Config } from '../platform/config.ts';
import { Parts } from '../platform/parts.ts';
import type { Runtime } from '../platform/runtime.ts';
import { sharedPerRuntime, type Lease } from '../platform/shared-per-runtime.ts';
import { startProjection } from '../platform/wiring.ts';
import { analysesProjection } from './analyses.projection.ts';
import { baselinesProjection } from './baselines.projection.ts';
import { BlobStore } from './blob-store.ts';
import { BrowserPool } from './browser/browser-pool.ts';
import { resolveChromiumPath } from './browser/chromium-path.ts';
import { screenshotsProjection } from './screenshots.projection.ts';
import { testRunsProjection } from './test-runs.projection.ts';

/** What the vision operations need; the HTTP face, the MCP tools and the CLI pass the same. */
export interface VisionDeps {
  db: Db;
  publisher: Pick<EventPublisher, 'publishOrdered'>;
  /** Where metered uses are recorded (usage.incremented). */
  usagePublisher: Pick<EventPublisher, 'publish'>;
  config: Pick<Config, 'vision' | 'urls' | 'ports'> & { publicRagUrl: string };
  pool: BrowserPool;
  blobs: BlobStore;
}

export interface VisionEngine {
  deps: VisionDeps;
  /** The browser can be launched here (installed and starting). */
  ready(): boolean;
}

/** The operations' dependencies over a runtime and a pool (the CLI builds its own pool). */
export function visionDeps(rt: Pick<Runtime, 'mongo' | 'publisher' | 'config'>, pool: BrowserPool): VisionDeps {
  const { config } = rt;
  return {
    db: rt.mongo.db,
    publisher: rt.publisher,
    usagePublisher: rt.publisher,
    config: { vision: config.vision, urls: config.urls, ports: config.ports, publicRagUrl: config.publicRagUrl },
    pool,
    blobs: new BlobStore(rt.mongo.db),
  };
}

/**
 * The browser pool and the vision projections of a process, shared by its faces (rag's HTTP API,
 * the MCP server): one Chromium per process, however many faces use it.
 */
export const leaseVisionEngine: (rt: Runtime) => Promise<Lease<VisionEngine>> = sharedPerRuntime(async (rt) => {
  const log = rt.log.child({ service: 'vision' });
  const parts = new Parts();
  const engine = await parts.starting(async () => {
    for (const projection of [screenshotsProjection, baselinesProjection, testRunsProjection, analysesProjection]) {
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
    const pool = new BrowserPool({ ...(executablePath ? { executablePath } : {}), allowList: vision.allowedHosts, maxConcurrent: vision.poolSize });
    parts.onStop(() => pool.close());
    return { deps: visionDeps(rt, pool), ready: () => browserProblem === null };
  });
  return { value: engine, stop: () => parts.stopAll((err) => log.error({ err }, 'vision engine: stop failed')) };
});
