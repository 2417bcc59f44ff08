import type { Logger } from '../platform/logger.ts';
import { Parts } from '../platform/parts.ts';
import { sharedPerRuntime, type Lease } from '../platform/shared-per-runtime.ts';
import type { Runtime } from '../platform/runtime.ts';
import { startConsumer, startProjection } from '../platform/wiring.ts';
import type { RagDeps } from './app/deps.ts';
import { collectionsProjection } from './collections.projection.ts';
import { indexerHandler } from './indexer.consumer.ts';
import { jobsProjection } from './jobs.projection.ts';
import { collectionIndexes } from './collection-indexes.ts';
import { LocalRetrieval } from './local-retrieval.ts';
import { PushedSources } from './pushed-sources.ts';
import { queriesProjection } from './queries.projection.ts';
import { every, HOUR_MS } from '../platform/periodic.ts';

/** The retrieval engine of a process, as its faces (HTTP, MCP) see it. */
export interface RagEngine {
  deps: RagDeps;
  /** Retrieval works here right now (the embedding model loaded). */
  retrievalReady(): boolean;
}

/**
 * The engine behind the retrieval faces: the collections, jobs and queries projections, the indexer and the
 * collections' indexes (SQLite files of this process, or PostgreSQL shared by replicas: RAG_INDEX_ENGINE).
 * A SQLite file is held by one process alone, so every face a process runs (rag's HTTP API, the MCP
 * server) shares this one engine; the first face to start it starts it,
 * the last to stop it stops it.
 */
export const leaseRagEngine: (rt: Runtime) => Promise<Lease<RagEngine>> = sharedPerRuntime(async (rt) => {
  const { engine, parts } = await startEngine(rt, rt.log.child({ service: 'rag-engine' }));
  return { value: engine, stop: () => parts.stopAll((err) => rt.log.error({ err }, 'rag engine: stop failed')) };
});

async function startEngine(rt: Runtime, log: Logger): Promise<{ engine: RagEngine; parts: Parts }> {
  const { config, mongo } = rt;
  const parts = new Parts();
  return parts.starting(async () => {
    parts.add(await startProjection(rt, log, collectionsProjection));
    parts.add(await startProjection(rt, log, jobsProjection));
    parts.add(await startProjection(rt, log, queriesProjection));
    const pushed = new PushedSources(mongo.db);
    await pushed.ensureIndexes();
    const retrieval = new LocalRetrieval({
      indexes: collectionIndexes(config.rag, log, { openIndexes: config.rag.openIndexes }),
      modelDir: config.rag.embeddingModelDir,
      threads: config.rag.embeddingThreads,
      maxFileBytes: config.rag.maxFileBytes,
      cacheEntries: config.rag.queryCacheEntries,
      work: config.rag.work,
      log,
    });
    parts.onStop(() => retrieval.close());
    await retrieval.warm();
    if (!retrieval.status().ready) log.warn({ problem: retrieval.status().problem }, 'retrieval unavailable: /health says degraded');
    const limits = { jobBudgetMs: config.rag.work.jobBudgetMs, maxStarts: config.rag.work.maxStarts };
    parts.add(
      await startConsumer(rt, log, {
        group: 'rag-indexer',
        eventTypes: ['rag.index-requested'],
        handler: indexerHandler({ db: mongo.db, publisher: rt.publisher, retrieval, pushed, log, limits }),
        partitionsAtOnce: config.rag.indexConcurrency,
      }),
    );
    const retention = async () => {
      const removed = await pushed.sweep(new Date(Date.now() - config.rag.pushedRetentionMs));
      if (removed > 0) log.info({ removed }, 'pushed sources past their retention deleted');
    };
    parts.add(every(HOUR_MS, retention, log, 'the pushed sources retention sweep'));
    const deps: RagDeps = { db: mongo.db, publisher: rt.publisher, usagePublisher: rt.publisher, config, retrieval, pushed };
    return { engine: { deps, retrievalReady: () => retrieval.status().ready }, parts };
  });
}
