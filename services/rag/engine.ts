import type { Logger } from '../platform/logger.ts';
import { Parts } from '../platform/parts.ts';
import { sharedPerRuntime, type Lease } from '../platform/shared-per-runtime.ts';
import type { Runtime } from '../platform/runtime.ts';
import { startConsumer, startProjection } from '../platform/wiring.ts';
import type { RagDeps } from './app/deps.ts';
import { collectionIndexes } from './collection-indexes.ts';
import { collectionsProjection } from './collections.projection.ts';
import { indexerHandler } from './indexer.consumer.ts';
import { jobsProjection } from './jobs.projection.ts';
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
 * The engine behind the retrieval faces: the collections, jobs and queries projections, the
 * collections' indexes (SQLite files of this process, or PostgreSQL shared by replicas:
 * RAG_INDEX_ENGINE) and, unless RAG_RUN_INDEXER=false, the indexer. A SQLite file is held by one
 * process alone, so every face a process runs (rag's HTTP API, the MCP server) shares this one
 * engine; the first face to start it starts it, the last to stop it stops it.
 */
export async function leaseRagEngine(rt: Runtime): Promise<Lease<RagEngine>> {
  const core = await leaseCore(rt);
  if (!rt.config.rag.runIndexer) return core;
  let indexer: Lease<void>;
  try {
    indexer = await leaseRagIndexer(rt);
  } catch (err) {
    await core.release();
    throw err;
  }
  let released = false;
  return {
    value: core.value,
    async release() {
      if (released) return;
      released = true;
      await indexer.release();
      await core.release();
    },
  };
}

/**
 * The indexer of a process: the `rag-indexer` consumer that runs index jobs on this process's
 * engine, and the pushed sources' retention sweep. Run by the faces (RAG_RUN_INDEXER, the default)
 * and by the indexer service; one per process whoever asks.
 */
export const leaseRagIndexer: (rt: Runtime) => Promise<Lease<void>> = sharedPerRuntime(async (rt) => {
  const log = rt.log.child({ service: 'rag-indexer' });
  const { config, mongo } = rt;
  const parts = new Parts();
  await parts.starting(async () => {
    // Stopped after the consumer (parts stop newest first): a job in hand still has its index.
    const core = await leaseCore(rt);
    parts.onStop(() => core.release());
    const { retrieval, pushed } = core.value.deps;
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
  });
  return { value: undefined, stop: () => parts.stopAll((err) => log.error({ err }, 'rag indexer: stop failed')) };
});

const leaseCore: (rt: Runtime) => Promise<Lease<RagEngine>> = sharedPerRuntime(async (rt) => {
  const { engine, parts } = await startCore(rt, rt.log.child({ service: 'rag-engine' }));
  return { value: engine, stop: () => parts.stopAll((err) => rt.log.error({ err }, 'rag engine: stop failed')) };
});

async function startCore(rt: Runtime, log: Logger): Promise<{ engine: RagEngine; parts: Parts }> {
  const { config, mongo } = rt;
  const parts = new Parts();
  return parts.starting(async () => {
    parts.add(await startProjection(rt, log, collectionsProjection));
    parts.add(await startProjection(rt, log, jobsProjection));
    parts.add(await startProjection(rt, log, queriesProjection));
    const pushed = new PushedSources(mongo.db);
    await pushed.ensureIndexes();
    const indexes = collectionIndexes(config.rag, log, { openIndexes: config.rag.openIndexes });
    // The shared index database joins the process's readiness (rag, mcp and the indexer): a replica
    // that cannot reach it answers no query and runs no job, so it takes no traffic either.
    Object.assign(rt.dependencies, indexes.readinessChecks());
    const retrieval = new LocalRetrieval({
      indexes,
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
    const deps: RagDeps = { db: mongo.db, publisher: rt.publisher, usagePublisher: rt.publisher, config, retrieval, pushed };
    return { engine: { deps, retrievalReady: () => retrieval.status().ready }, parts };
  });
}
