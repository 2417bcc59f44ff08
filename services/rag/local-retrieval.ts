import type { Logger } from '../platform/logger.ts';
import { OnnxEmbedder } from './embedding/embedder.ts';
import { defaultModelDir } from './embedding/model-folder.ts';
import type { CollectionIndex, CollectionIndexes } from './index-store/collection-index.ts';
import { embeddingIdentity } from './indexing/embedding-text.ts';
import { indexCollection, type FilePreparer } from './indexing/index-collection.ts';
import { ragError } from '../premium/caller.ts';
import { LruCache } from './lru-cache.ts';
import {
  IndexBudgetError,
  type IndexHooks,
  type IndexOutcome,
  type IndexWork,
  type NameLookup,
  type Retrieval,
  type SearchHit,
} from './retrieval.ts';
import { lookupName } from './name-lookup.ts';
import type { SourceEntry } from './sources/source-file.ts';
import { EMBED_QUERY, LIST_SOURCES, PREPARE_FILE, type Listed, type PrepareInput } from './indexing/index.task.ts';
import { TaskError } from '../platform/work/task.ts';
import { WorkBudgetError, WorkPool, WorkPoolClosed, WorkQueueFull } from '../platform/work/work-pool.ts';

export interface LocalRetrievalOptions {
  /** Where the collections' indexes live: SQLite files of this process, or a database replicas share. */
  indexes: CollectionIndexes;
  /** A model folder; undefined: the one the install step provisions. */
  modelDir: string | undefined;
  threads: number;
  maxFileBytes: number;
  cacheEntries: number;
  /** Budgets of index work on worker threads (see services/platform/work). */
  work: { threads: number; memoryMb: number; fileBudgetMs: number; listBudgetMs: number };
  log: Logger;
}

/**
 * The embedded retrieval engine (`vectorDB: local`): each collection's index with BM25 and vectors
 * (services/rag/index-store: a SQLite file of this process, or PostgreSQL shared by replicas), the
 * embedding model in process, and a result cache keyed by the index's generation read at query
 * time, so any change to an index, by any replica, makes its cached answers unreachable.
 *
 * The embedder is loaded on first use, so a missing model makes the feature unavailable without
 * keeping the service down.
 */
/** The model in this thread: its name and size make each store's identity (queries embed on the pool). */
interface LoadedModel {
  embedder: OnnxEmbedder;
}

export class LocalRetrieval implements Retrieval {
  readonly #options: LocalRetrievalOptions;
  readonly #indexes: CollectionIndexes;
  readonly #cache: LruCache<string, SearchHit[]>;
  readonly #pool: WorkPool;
  /** Query embeddings, fair per customer: one customer's flood of queries waits behind the others' next one. */
  readonly #queries: WorkPool;
  #embedder: Promise<LoadedModel> | undefined;
  #problem: string | undefined;

  constructor(options: LocalRetrievalOptions) {
    this.#options = options;
    this.#cache = new LruCache(options.cacheEntries);
    this.#indexes = options.indexes;
    // One task per tenant runs while others wait: a customer's big job cannot take every thread.
    this.#pool = new WorkPool({
      name: 'indexing',
      threads: options.work.threads,
      memoryMb: options.work.memoryMb,
      timeoutMs: options.work.fileBudgetMs,
      queuePerTenant: 64,
      runningPerTenant: 1,
    });
    // One inference thread: the other core stays with the loop that answers everyone.
    this.#queries = new WorkPool({
      name: 'queries',
      threads: 1,
      memoryMb: 256,
      timeoutMs: 10_000,
      queuePerTenant: 64,
      runningPerTenant: 1,
    });
  }

  /** Loads the model now (start-up): a problem is reported by status(), not thrown. */
  async warm(): Promise<void> {
    await this.#loadEmbedder().catch(() => undefined);
    // The query thread loads its own model: at start-up, not in the first customer's query.
    if (this.#embedder) {
      await this.#queries
        .run(EMBED_QUERY, { text: 'warm', model: { dir: this.#options.modelDir, threads: 1 } }, { tenant: 'start-up' })
        .catch(() => undefined);
    }
  }

  /** Whether retrieval works in this deployment (the model loads), and if not, why. */
  status(): { ready: boolean; problem?: string } {
    return this.#problem ? { ready: false, problem: this.#problem } : { ready: this.#embedder !== undefined };
  }

  async countCandidates(projectPath: string, tenant: string): Promise<number> {
    const listed = await this.#list({ root: projectPath, pushed: [] }, tenant);
    return listed.filter((e) => !('skipped' in e)).length;
  }

  async index(work: IndexWork, hooks: IndexHooks = {}): Promise<IndexOutcome> {
    const { embedder } = await this.#loadEmbedder();
    const store = await this.#store(work.collectionId, embedder);
    this.#indexes.pin(work.collectionId, 1);
    // Each file is a task on a worker thread: beat from here while one runs, so the group keeps this member.
    const beating = hooks.heartbeat ? setInterval(() => void hooks.heartbeat?.().catch(() => undefined), 3000) : undefined;
    try {
      const { entries, pushedTexts } = await this.#sources(work, hooks.signal);
      const result = await indexCollection({
        store,
        embedder,
        files: entries,
        mode: work.mode === 'pushed' ? 'partial' : 'full',
        prepare: this.#preparer(work, pushedTexts, hooks.signal),
        ...(hooks.signal ? { signal: hooks.signal } : {}),
        ...(hooks.heartbeat ? { heartbeat: hooks.heartbeat } : {}),
        onProgress: (p) => hooks.onProgress?.({ filesDone: p.filesDone, filesTotal: p.filesTotal, chunks: p.chunks }),
      });
      return {
        filesIndexed: result.filesIndexed,
        filesUnchanged: result.filesUnchanged,
        filesSkipped: result.filesSkipped,
        filesRemoved: result.filesRemoved,
        chunks: (await store.counts()).chunks,
        manifest: result.manifest.map(({ path, hash }) => ({ path, hash })),
      };
    } finally {
      if (beating) clearInterval(beating);
      this.#indexes.pin(work.collectionId, -1);
    }
  }

  async search(
    collectionId: string,
    query: string,
    topK: number,
    tenant: string = collectionId,
  ): Promise<{ hits: SearchHit[]; cached: boolean }> {
    const model = await this.#loadEmbedder();
    const store = await this.#store(collectionId, model.embedder);
    // Read now, not remembered: another replica's write must make this replica's cached answers unreachable.
    const key = `${collectionId}\u0000${await store.generation()}\u0000${topK}\u0000${query}`;
    const cached = this.#cache.get(key);
    if (cached) return { hits: cached, cached: true };
    const vector = await this.#queries
      .run(EMBED_QUERY, { text: query, model: { dir: this.#options.modelDir, threads: 1 } }, { tenant })
      .catch((err: unknown) => {
        if (err instanceof WorkQueueFull) throw ragError(429, 'TOO_BUSY', 'too many of your queries are waiting; try again shortly');
        if (err instanceof WorkPoolClosed) throw ragError(503, 'RETRIEVAL_UNAVAILABLE', 'retrieval is stopping');
        throw err;
      });
    const hits = (await store.search(query, vector, topK)).map((h) => ({
      id: h.id,
      content: h.content,
      score: h.score,
      metadata: { ...h.metadata },
    }));
    this.#cache.set(key, hits);
    return { hits, cached: false };
  }

  async lookup(collectionId: string, name: string, limit: number): Promise<NameLookup> {
    const model = await this.#loadEmbedder();
    return lookupName(await this.#store(collectionId, model.embedder), name, limit);
  }

  async drop(collectionId: string): Promise<void> {
    await this.#indexes.drop(collectionId);
  }

  async close(): Promise<void> {
    await this.#pool.close();
    await this.#queries.close();
    await this.#indexes.close();
  }

  /** Listing runs on a worker: ignore rules are customer input, and a folder can be huge. */
  #list(
    input: { root: string | null; pushed: { path: string; content: string }[] },
    tenant: string,
    signal?: AbortSignal,
  ): Promise<Listed[]> {
    const options = { tenant, timeoutMs: this.#options.work.listBudgetMs, ...(signal ? { signal } : {}) };
    return this.#pool.run(LIST_SOURCES, { ...input, maxFileBytes: this.#options.maxFileBytes }, options).catch((err: unknown) => {
      if (err instanceof WorkBudgetError)
        throw new IndexBudgetError(`listing the sources ran past its ${err.budget === 'memory' ? 'memory' : 'time'} budget`, true);
      if (err instanceof TaskError && (err.name === 'InvalidSourcePathError' || err.name === 'FolderMovedError'))
        throw new IndexBudgetError(err.message);
      throw err;
    });
  }

  /** The job's sources as listed on a worker: a 'full' job the folder and every pushed file (a pushed path wins), a 'pushed' job its files. */
  async #sources(work: IndexWork, signal: AbortSignal | undefined): Promise<{ entries: SourceEntry[]; pushedTexts: Map<string, string> }> {
    const pushed: { path: string; content: string }[] = [];
    if (work.mode === 'pushed') {
      for (const ref of work.files ?? []) {
        const file = await work.pushed.get(work.collectionId, ref.path);
        if (file) pushed.push({ path: file.path, content: file.content });
      }
    } else {
      for await (const file of work.pushed.all(work.collectionId)) pushed.push({ path: file.path, content: file.content });
    }
    const texts = new Map(pushed.map((f) => [f.path, f.content]));
    const listed = await this.#list({ root: work.mode === 'pushed' ? null : work.projectPath, pushed }, work.tenant, signal);
    // Files are read by the worker that prepares them (#preparer): a pushed file's text is sent there, a
    // folder's file is read there, inside the folder, never here.
    const entries = listed.map((e) =>
      'skipped' in e ? e : { ...e, read: () => Promise.reject(new Error(`${e.path} is read by the indexing pool, not here`)) },
    );
    return { entries, pushedTexts: texts };
  }

  /** Each changed file read, chunked and embedded on a worker; one over its budget is skipped, not fatal to the job. */
  #preparer(work: IndexWork, pushedTexts: ReadonlyMap<string, string>, signal: AbortSignal | undefined): FilePreparer {
    return async (source, storedHash, previous) => {
      const input: PrepareInput = {
        root: work.projectPath,
        path: source.path,
        text: pushedTexts.get(source.path) ?? null,
        storedHash,
        previous,
        maxFileBytes: this.#options.maxFileBytes,
        model: { dir: this.#options.modelDir, threads: this.#options.threads },
      };
      try {
        return await this.#pool.run(PREPARE_FILE, input, { tenant: work.tenant, ...(signal ? { signal } : {}) });
      } catch (err) {
        if (err instanceof WorkBudgetError) {
          this.#options.log.warn({ collectionId: work.collectionId, budget: err.budget }, 'a file went over its indexing budget: skipped');
          return { skipped: 'over-budget' };
        }
        if (err instanceof TaskError && err.name === 'FolderMovedError') throw new IndexBudgetError(err.message);
        throw err;
      }
    };
  }

  #loadEmbedder(): Promise<LoadedModel> {
    this.#embedder ??= OnnxEmbedder.load(this.#options.modelDir ?? defaultModelDir(), { intraOpThreads: this.#options.threads }).then(
      (embedder) => {
        this.#problem = undefined;
        this.#options.log.info({ model: embedder.folder.manifest.name, dimensions: embedder.dimensions }, 'embedding model loaded');
        return { embedder };
      },
      (err: unknown) => {
        this.#problem = `the embedding model does not load: ${(err as Error).message}`;
        this.#embedder = undefined;
        throw ragError(
          503,
          'RETRIEVAL_UNAVAILABLE',
          'retrieval is not available in this deployment right now (the embedding model does not load)',
        );
      },
    );
    return this.#embedder;
  }

  #store(collectionId: string, embedder: OnnxEmbedder): Promise<CollectionIndex> {
    return this.#indexes.open(collectionId, embeddingIdentity(embedder.folder.manifest.name, embedder.dimensions));
  }
}
