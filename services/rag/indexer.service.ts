import type { ServiceModule } from '../platform/service.ts';
import { leaseRagIndexer } from './engine.ts';

/**
 * The indexer on its own (`svc run indexer`): the rag projections and the `rag-indexer` consumer
 * that runs index jobs, no HTTP (OPS_PORT serves its health). For deployments whose rag and mcp
 * replicas leave jobs to it (RAG_RUN_INDEXER=false), which needs the shared index
 * (RAG_INDEX_ENGINE=postgres).
 */
export const indexerService: ServiceModule = {
  name: 'indexer',
  description: 'rag indexer: runs index jobs (rag.index-requested) into the shared PostgreSQL index, no HTTP (RAG_INDEX_ENGINE=postgres)',
  async start(rt) {
    const log = rt.log.child({ service: 'indexer' });
    if (rt.config.rag.indexEngine.kind === 'sqlite') {
      // SQLite files are the process's that serves them: the rag/mcp services index them (RAG_RUN_INDEXER
      // must be true then). A consumer here would take their jobs and write files no face reads.
      // Info, not a warning: `svc start` and `svc run all` start every service, this one included.
      log.info(
        'RAG_INDEX_ENGINE=sqlite: index jobs run in the rag and mcp services, which own the files; the indexer service runs nothing',
      );
      return { name: 'indexer', stop: async () => undefined };
    }
    const lease = await leaseRagIndexer(rt);
    log.info({ concurrency: rt.config.rag.indexConcurrency }, 'indexer running');
    return { name: 'indexer', stop: () => lease.release() };
  },
};
