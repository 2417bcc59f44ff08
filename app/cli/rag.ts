import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import cliProgress from 'cli-progress';
import { newEvent } from '../../events/envelope.ts';
import { publishAndApply } from '../../events/own-events.ts';
import type { RagDeps } from '../../services/rag/app/deps.ts';
import { queryCollection } from '../../services/rag/app/query-collection.ts';
import { setupCollection } from '../../services/rag/app/setup-collection.ts';
import type { Caller } from '../../services/premium/caller.ts';
import { collectionIdOf, collectionsProjection, getCollection, type RagCollection } from '../../services/rag/collections.projection.ts';
import type { IndexCompleted } from '../../services/rag/events.ts';
import { COLLECTION_NAME } from '../../services/rag/input.ts';
import { collectionIndexes } from '../../services/rag/collection-indexes.ts';
import { LocalRetrieval } from '../../services/rag/local-retrieval.ts';
import { PushedSources } from '../../services/rag/pushed-sources.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { createAppRuntime } from '../runtime.ts';
import type { Runtime } from '../../services/platform/runtime.ts';

import { UsageError } from './exit.ts';

export const RAG_USAGE = `svc rag index <collection> <path>      set the collection up over <path> (inside RAG_ROOTS) and index it now
svc rag query <collection> "<text>"    search it (--top-k N, default 5)
svc rag reindex <collection>           rebuild its index from its sources (the folder and pushed files)
options: --customer <id> (default: operator), whose collection it is`;

export interface RagCommandOptions {
  customer?: string;
  topK?: string;
}

/**
 * Operators' retrieval commands: the same operations as the service, run in this process against
 * the collection's index file (held by one process at a time: while the rag service holds it, the
 * command says so; use the HTTP API then). Index runs are recorded in the log like the service's.
 */
export async function ragCommand(args: readonly string[], options: RagCommandOptions): Promise<number> {
  const [action, collectionName, text, ...extra] = args;
  if (!action || !['index', 'query', 'reindex'].includes(action) || extra.length > 0) throw new UsageError(`usage:\n${RAG_USAGE}`);
  if (!collectionName || !COLLECTION_NAME.test(collectionName)) throw new UsageError('name a collection: 1-64 of A-Z a-z 0-9 _ . -');
  if ((action === 'index' || action === 'query') && !text)
    throw new UsageError(action === 'index' ? 'name the folder to index' : 'give the text to search for');
  const topK = options.topK === undefined ? 5 : Number(options.topK);
  if (!Number.isInteger(topK) || topK < 1 || topK > 50) throw new UsageError('--top-k takes a whole number from 1 to 50');
  const caller: Caller = { customerId: options.customer ?? 'operator', keyHash: null };

  const config = loadConfig();
  const log = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  const rt = await createAppRuntime(config, log);
  const retrieval = new LocalRetrieval({
    indexes: collectionIndexes(config.rag, log),
    modelDir: config.rag.embeddingModelDir,
    threads: config.rag.embeddingThreads,
    maxFileBytes: config.rag.maxFileBytes,
    cacheEntries: 0,
    work: config.rag.work,
    log,
  });
  const deps: RagDeps = {
    db: rt.mongo.db,
    publisher: rt.publisher,
    usagePublisher: rt.publisher,
    config,
    retrieval,
    pushed: new PushedSources(rt.mongo.db),
  };
  try {
    if (action === 'query') return await query(deps, caller, collectionName, text!, topK);
    if (action === 'index') await setupCollection(deps, caller, { projectPath: resolve(text!), collectionName }, `cli-${randomUUID()}`);
    const collection = await getCollection(rt.mongo.db, collectionIdOf(caller.customerId, collectionName));
    if (!collection) throw new UsageError(`no collection "${collectionName}" for customer ${caller.customerId}`);
    if (action === 'reindex') await retrieval.drop(collection.collectionId);
    return await index(rt, deps, collection);
  } finally {
    await retrieval.close();
    await rt.close();
  }
}

async function index(rt: Runtime, deps: RagDeps, collection: RagCollection): Promise<number> {
  const bar = new cliProgress.SingleBar(
    { format: ' indexing [{bar}] {value}/{total} files | {chunks} chunks', hideCursor: true, stream: process.stderr },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  const began = Date.now();
  try {
    const outcome = await deps.retrieval.index(
      {
        collectionId: collection.collectionId,
        tenant: collection.customerId,
        mode: 'full',
        projectPath: collection.projectPath,
        pushed: deps.pushed,
      },
      {
        onProgress: ({ filesDone, filesTotal, chunks }) => {
          if (!started) {
            bar.start(filesTotal, filesDone, { chunks });
            started = true;
          }
          bar.setTotal(filesTotal);
          bar.update(filesDone, { chunks });
        },
      },
    );
    bar.stop();
    const durationMs = Date.now() - began;
    const completed: IndexCompleted = newEvent(
      'rag.index-completed',
      { jobId: `cli-${randomUUID()}`, collectionId: collection.collectionId, customerId: collection.customerId, ...outcome, durationMs },
      { correlationId: 'svc rag' },
    );
    await publishAndApply(rt.publisher, rt.mongo.db, collectionsProjection, [completed]);
    process.stdout.write(
      `indexed ${collection.collectionName}: ${outcome.filesIndexed} files indexed, ${outcome.filesUnchanged} unchanged, ${outcome.filesSkipped} skipped, ` +
        `${outcome.filesRemoved} removed; ${outcome.chunks} chunks; ${(durationMs / 1000).toFixed(1)} s\n`,
    );
    return 0;
  } finally {
    if (started) bar.stop();
  }
}

async function query(deps: RagDeps, caller: Caller, collectionName: string, text: string, topK: number): Promise<number> {
  const began = performance.now();
  const result = await queryCollection(deps, caller, { query: text, collectionName, topK }, 'svc rag');
  const ms = performance.now() - began;
  for (const [i, hit] of result.results.entries()) {
    const m = hit.metadata;
    process.stdout.write(
      `${i + 1}. ${m.file}:${m.startLine}-${m.endLine}  ${m.type}${m.symbol ? ` ${m.symbol}` : ''}  (score ${hit.score.toFixed(4)})\n`,
    );
  }
  process.stdout.write(`${result.results.length} result(s) in ${ms.toFixed(1)} ms (model load included on a first query)\n`);
  return 0;
}
