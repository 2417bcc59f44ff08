import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { TransientError } from '../../events/errors.ts';
import type { Logger } from '../platform/logger.ts';
import { OnnxEmbedder, type Embedder } from './embedding/embedder.ts';
import { defaultModelDir } from './embedding/model-folder.ts';
import { ModelMismatchError, SchemaMismatchError, StoreBusyError } from './index-store/errors.ts';
import { QueryBatcher } from './index-store/query-batcher.ts';
import { IndexStore } from './index-store/store.ts';
import { embeddingIdentity } from './indexing/embedding-text.ts';
import { indexCollection } from './indexing/index-collection.ts';
import { ragError } from './caller.ts';
import { LruCache } from './lru-cache.ts';
import type { IndexHooks, IndexOutcome, IndexWork, NameLookup, Retrieval, SearchHit } from './retrieval.ts';
import { lookupName } from './name-lookup.ts';
import { readPushedFiles } from './sources/pushed.ts';
import { isSkipped, type SourceEntry } from './sources/source-file.ts';
import { walkProject } from './sources/walk.ts';

/** Another process (the rag service, or a `svc rag` command) holds the collection's index file. */
export class IndexHeldError extends TransientError {
  constructor(collectionId: string, cause: unknown) {
    super(`collection ${collectionId}'s index is held by another process (the rag service?): stop it, or use the HTTP API`, { cause });
    this.name = 'IndexHeldError';
  }
}

export interface LocalRetrievalOptions {
  /** Where each collection's SQLite file lives. */
  dataDir: string;
  /** A model folder; undefined: the one the install step provisions. */
  modelDir: string | undefined;
  threads: number;
  maxFileBytes: number;
  cacheEntries: number;
  log: Logger;
}

/**
 * The embedded retrieval engine (`vectorDB: local`): one SQLite file per collection with BM25 and
 * vectors (services/rag/index-store), the embedding model in process, and a result cache keyed by
 * the index's generation, so any change to an index makes its cached answers unreachable.
 *
 * A store is held open by this process alone (the file is locked); the embedder is loaded on first
 * use, so a missing model makes the feature unavailable without keeping the service down.
 */
/** The model, and a front for queries that lets concurrent ones share one inference. */
interface LoadedModel {
  embedder: OnnxEmbedder;
  queries: Embedder;
}

export class LocalRetrieval implements Retrieval {
  readonly #options: LocalRetrievalOptions;
  readonly #stores = new Map<string, IndexStore>();
  readonly #cache: LruCache<string, SearchHit[]>;
  #embedder: Promise<LoadedModel> | undefined;
  #problem: string | undefined;

  constructor(options: LocalRetrievalOptions) {
    this.#options = options;
    this.#cache = new LruCache(options.cacheEntries);
    mkdirSync(options.dataDir, { recursive: true });
  }

  /** Loads the model now (start-up): a problem is reported by status(), not thrown. */
  async warm(): Promise<void> {
    await this.#loadEmbedder().catch(() => undefined);
  }

  /** Whether retrieval works in this deployment (the model loads), and if not, why. */
  status(): { ready: boolean; problem?: string } {
    return this.#problem ? { ready: false, problem: this.#problem } : { ready: this.#embedder !== undefined };
  }

  async countCandidates(projectPath: string): Promise<number> {
    let count = 0;
    for await (const entry of walkProject(projectPath, { maxFileBytes: this.#options.maxFileBytes })) if (!isSkipped(entry)) count++;
    return count;
  }

  async index(work: IndexWork, hooks: IndexHooks = {}): Promise<IndexOutcome> {
    const { embedder } = await this.#loadEmbedder();
    const store = this.#store(work.collectionId, embedder);
    const files = work.mode === 'pushed' ? await this.#pushedFiles(work) : await this.#allSources(work);
    const result = await indexCollection({
      store,
      embedder,
      files,
      mode: work.mode === 'pushed' ? 'partial' : 'full',
      ...(hooks.signal ? { signal: hooks.signal } : {}),
      ...(hooks.heartbeat ? { heartbeat: hooks.heartbeat } : {}),
      onProgress: (p) => hooks.onProgress?.({ filesDone: p.filesDone, filesTotal: p.filesTotal, chunks: p.chunks }),
    });
    return {
      filesIndexed: result.filesIndexed,
      filesUnchanged: result.filesUnchanged,
      filesSkipped: result.filesSkipped,
      filesRemoved: result.filesRemoved,
      chunks: store.counts().chunks,
      manifest: result.manifest.map(({ path, hash }) => ({ path, hash })),
    };
  }

  async search(collectionId: string, query: string, topK: number): Promise<{ hits: SearchHit[]; cached: boolean }> {
    const model = await this.#loadEmbedder();
    const store = this.#store(collectionId, model.embedder);
    const key = `${collectionId}\u0000${store.generation}\u0000${topK}\u0000${query}`;
    const cached = this.#cache.get(key);
    if (cached) return { hits: cached, cached: true };
    const [vector] = await model.queries.embed([query], 'query');
    const hits = store.search(query, vector!, topK).map((h) => ({ id: h.id, content: h.content, score: h.score, metadata: { ...h.metadata } }));
    this.#cache.set(key, hits);
    return { hits, cached: false };
  }

  async lookup(collectionId: string, name: string, limit: number): Promise<NameLookup> {
    const model = await this.#loadEmbedder();
    return lookupName(this.#store(collectionId, model.embedder), name, limit);
  }

  async drop(collectionId: string): Promise<void> {
    this.#stores.get(collectionId)?.close();
    this.#stores.delete(collectionId);
    IndexStore.remove(this.#file(collectionId));
  }

  async close(): Promise<void> {
    for (const store of this.#stores.values()) store.close();
    this.#stores.clear();
  }

  /** A project folder's files and every pushed file (a pushed path wins over the folder's file of that path). */
  async #allSources(work: IndexWork): Promise<SourceEntry[]> {
    const pushed: { path: string; content: string }[] = [];
    for await (const file of work.pushed.all(work.collectionId)) pushed.push({ path: file.path, content: file.content });
    const entries = readPushedFiles(pushed, { maxFileBytes: this.#options.maxFileBytes });
    if (!work.projectPath) return entries;
    const taken = new Set(entries.map((e) => e.path));
    for await (const entry of walkProject(work.projectPath, { maxFileBytes: this.#options.maxFileBytes })) if (!taken.has(entry.path)) entries.push(entry);
    return entries;
  }

  /** The pushed files a job names, as pushed last (a newer push of a path wins: it is indexed by its own job too). */
  async #pushedFiles(work: IndexWork): Promise<SourceEntry[]> {
    const files: { path: string; content: string }[] = [];
    for (const ref of work.files ?? []) {
      const file = await work.pushed.get(work.collectionId, ref.path);
      if (file) files.push({ path: file.path, content: file.content });
    }
    return readPushedFiles(files, { maxFileBytes: this.#options.maxFileBytes });
  }

  #loadEmbedder(): Promise<LoadedModel> {
    this.#embedder ??= OnnxEmbedder.load(this.#options.modelDir ?? defaultModelDir(), { intraOpThreads: this.#options.threads }).then(
      (embedder) => {
        this.#problem = undefined;
        this.#options.log.info({ model: embedder.folder.manifest.name, dimensions: embedder.dimensions }, 'embedding model loaded');
        return { embedder, queries: new QueryBatcher(embedder) };
      },
      (err: unknown) => {
        this.#problem = `the embedding model does not load: ${(err as Error).message}`;
        this.#embedder = undefined;
        throw ragError(503, 'RETRIEVAL_UNAVAILABLE', 'retrieval is not available in this deployment right now (the embedding model does not load)');
      },
    );
    return this.#embedder;
  }

  #store(collectionId: string, embedder: OnnxEmbedder): IndexStore {
    const open = this.#stores.get(collectionId);
    if (open && !open.closed) return open;
    const model = embeddingIdentity(embedder.folder.manifest.name, embedder.dimensions);
    let store: IndexStore;
    try {
      store = IndexStore.open(this.#file(collectionId), { model });
    } catch (err) {
      if (err instanceof StoreBusyError) throw new IndexHeldError(collectionId, err);
      // Made by another model or schema: derived data, so it is rebuilt from the sources.
      if (!(err instanceof ModelMismatchError || err instanceof SchemaMismatchError)) throw err;
      this.#options.log.warn({ collectionId, err: (err as Error).message }, 'index made by another model or schema: starting it again');
      IndexStore.remove(this.#file(collectionId));
      store = IndexStore.open(this.#file(collectionId), { model });
    }
    this.#stores.set(collectionId, store);
    return store;
  }

  #file(collectionId: string): string {
    return join(this.#options.dataDir, `${collectionId}.sqlite`);
  }
}
