/**
 * Sources -> index store. Lists every source first (hash and size, no text kept), removes what is
 * gone, then chunks, embeds and writes each changed file in path order, one transaction per file.
 * A file whose stored hash equals its own is not read again, chunked or embedded. Same sources,
 * same chunks and vectors: the order, the chunker and the embedding batches depend only on them.
 */

import type { ChunkOptions } from '../chunking/chunk.ts';
import { chunkFile } from '../chunking/chunker.ts';
import type { Embedder } from '../embedding/embedder.ts';
import type { CollectionIndex } from '../index-store/collection-index.ts';
import { sqliteIndex } from '../index-store/sqlite-index.ts';
import { IndexStore } from '../index-store/store.ts';
import type { ChunkRecord, StoredVector } from '../index-store/types.ts';
import { hashText, isSkipped, SKIP_REASONS, SkippedSourceError } from '../sources/source-file.ts';
import type { SkipReason, SourceEntry, SourceFile } from '../sources/source-file.ts';
import { DEFAULT_RECIPE } from './embedding-text.ts';
import type { EmbeddingRecipe } from './embedding-text.ts';
import { Pulse } from './heartbeat.ts';

export type IndexMode = 'full' | 'partial';

export interface IndexProgress {
  readonly phase: 'scanning' | 'removing' | 'indexing' | 'done';
  /** source files listed so far (final once scanning is over) */
  readonly filesTotal: number;
  /** files indexed + unchanged so far */
  readonly filesDone: number;
  readonly filesIndexed: number;
  readonly filesUnchanged: number;
  readonly filesSkipped: number;
  /** chunks written so far in this run */
  readonly chunks: number;
  /** the file just finished */
  readonly path?: string;
}

export interface IndexCollectionOptions {
  /** a SQLite store of this process, or any collection's index (a shared one: services/rag/index-store/pg) */
  readonly store: CollectionIndex | IndexStore;
  readonly embedder: Embedder;
  /** `walkProject(...)`, `readPushedFiles(...)`, or any list of `SourceEntry` */
  readonly files: AsyncIterable<SourceEntry> | Iterable<SourceEntry>;
  /**
   * `full` (default): the sources are the whole collection, and stored files missing from them are
   * removed. `partial`: the sources are an update (pushed files); nothing else is removed.
   */
  readonly mode?: IndexMode;
  readonly onProgress?: (progress: IndexProgress) => void;
  /** checked between files and embedding batches; the file in hand is not written */
  readonly signal?: AbortSignal;
  /** called at least every `heartbeatIntervalMs` while work goes on; awaited; throwing stops the run */
  readonly heartbeat?: () => void | Promise<void>;
  /** default 1000 */
  readonly heartbeatIntervalMs?: number;
  /** chunks per `embed()` call (default 8: about half a second of work on 2 cores, so beats and aborts come often) */
  readonly batchSize?: number;
  readonly chunkOptions?: Partial<ChunkOptions>;
  /** must match the recipe in the store's model identity (see `embeddingIdentity`) */
  readonly recipe?: EmbeddingRecipe;
  /**
   * Reads, chunks and embeds one changed file. Default: here, with `embedder`. The service passes
   * one that does it on a worker thread within a budget (services/rag/indexing/index.task.ts).
   */
  readonly prepare?: FilePreparer;
}

/** What preparing a file gives: its chunks with vectors, or why it is not (or no longer) indexed. */
export type Prepared =
  | { readonly unchanged: true }
  | { readonly skipped: SkipReason }
  | { readonly hash: string; readonly size: number; readonly records: ChunkRecord[]; readonly reused?: number };

/**
 * Prepares `source`, whose stored hash is `storedHash` (a file read again with that hash is
 * `unchanged`); `previous` are the stored file's chunks with their vectors, which chunks that come
 * out the same take instead of being embedded again (`reused` counts them).
 */
export type FilePreparer = (source: SourceFile, storedHash: string | undefined, previous: readonly StoredVector[]) => Promise<Prepared>;

export interface IndexResult {
  readonly filesIndexed: number;
  readonly filesUnchanged: number;
  readonly filesSkipped: number;
  readonly skipped: Readonly<Record<SkipReason, number>>;
  readonly filesRemoved: number;
  /** chunks written in this run */
  readonly chunks: number;
  /** of those, chunks whose vector was the stored one of the same text (a changed file's unchanged chunks) */
  readonly chunksReused: number;
  readonly durationMs: number;
  /** every file in the store after the run, by path */
  readonly manifest: ReadonlyArray<{ path: string; hash: string }>;
}

export class DuplicateSourceError extends Error {
  readonly path: string;

  constructor(path: string) {
    super(`the sources list ${path} twice`);
    this.name = 'DuplicateSourceError';
    this.path = path;
  }
}

/** Chunks per `embed()` call unless `batchSize` says otherwise (bench/rag.ts embeds as the indexer does). */
export const DEFAULT_BATCH_SIZE = 8;
const DEFAULT_HEARTBEAT_MS = 1000;

export async function indexCollection(options: IndexCollectionOptions): Promise<IndexResult> {
  const started = performance.now();
  const { embedder, signal } = options;
  const store = options.store instanceof IndexStore ? sqliteIndex(options.store) : options.store;
  if (store.model.dimensions !== embedder.dimensions) {
    throw new RangeError(`the store holds ${store.model.dimensions}-dimension vectors, the embedder makes ${embedder.dimensions}`);
  }
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`batchSize must be a positive integer, got ${batchSize}`);
  const recipe = options.recipe ?? DEFAULT_RECIPE;
  const pulse = new Pulse(options.heartbeat, options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_MS);
  const prepare =
    options.prepare ??
    preparedHere({
      embedder,
      batchSize,
      recipe,
      pulse,
      ...(signal ? { signal } : {}),
      ...(options.chunkOptions ? { chunkOptions: options.chunkOptions } : {}),
    });
  const skipped = Object.fromEntries(SKIP_REASONS.map((r) => [r, 0])) as Record<SkipReason, number>;
  const counts = { filesIndexed: 0, filesUnchanged: 0, filesSkipped: 0, chunks: 0, chunksReused: 0 };
  const report = (phase: IndexProgress['phase'], filesTotal: number, path?: string) =>
    options.onProgress?.({
      phase,
      filesTotal,
      filesDone: counts.filesIndexed + counts.filesUnchanged,
      ...counts,
      ...(path ? { path } : {}),
    });
  const skip = (reason: SkipReason) => {
    skipped[reason]++;
    counts.filesSkipped++;
  };

  // 1. List: hashes and sizes only.
  const sources = new Map<string, SourceFile>();
  const skippedPaths = new Set<string>();
  let listed = 0;
  for await (const entry of options.files) {
    signal?.throwIfAborted();
    if (sources.has(entry.path) || skippedPaths.has(entry.path)) throw new DuplicateSourceError(entry.path);
    if (isSkipped(entry)) {
      skippedPaths.add(entry.path);
      skip(entry.skipped);
    } else {
      sources.set(entry.path, entry);
    }
    if (++listed % 200 === 0) report('scanning', sources.size);
    await pulse.maybe();
  }
  const paths = [...sources.keys()].sort(byCodeUnits);
  const total = paths.length;

  // 2. Remove what the collection no longer has (a skipped file is no longer in it either).
  const stored = new Map((await store.manifest()).map((f) => [f.path, f.hash]));
  let filesRemoved = 0;
  if ((options.mode ?? 'full') === 'full') {
    const gone = [...stored.keys()].filter((p) => !sources.has(p));
    report('removing', total);
    filesRemoved = await store.removeFiles(gone);
  } else {
    const nowSkipped = [...skippedPaths].filter((p) => stored.has(p));
    filesRemoved = await store.removeFiles(nowSkipped);
  }

  // 3. Index what changed, one file at a time.
  for (const path of paths) {
    signal?.throwIfAborted();
    const source = sources.get(path) as SourceFile;
    const before = stored.get(path);
    if (before === source.hash) {
      counts.filesUnchanged++;
      report('indexing', total, path);
      continue;
    }
    // A changed file keeps the vectors of its chunks that did not change: an edit re-embeds what it touched.
    const previous = before === undefined ? [] : await store.fileVectors(path);
    const prepared = await prepare(source, before, previous);
    signal?.throwIfAborted();
    if ('unchanged' in prepared) {
      counts.filesUnchanged++;
      report('indexing', total, path);
      continue;
    }
    if ('skipped' in prepared) {
      skip(prepared.skipped);
      if (before !== undefined) filesRemoved += await store.removeFiles([path]);
      report('indexing', total, path);
      continue;
    }
    const { hash, size, records } = prepared;
    await store.writeFile({ path, hash, size }, records);
    counts.filesIndexed++;
    counts.chunks += records.length;
    counts.chunksReused += prepared.reused ?? 0;
    report('indexing', total, path);
    await pulse.maybe();
  }

  report('done', total);
  return {
    ...counts,
    skipped,
    filesRemoved,
    durationMs: performance.now() - started,
    manifest: (await store.manifest()).map(({ path, hash }) => ({ path, hash })),
  };
}

/** How a file's chunks are embedded: by what, in batches of how many, checked for a stop between them. */
export interface EmbedOptions {
  embedder: Embedder;
  batchSize: number;
  recipe: EmbeddingRecipe;
  pulse?: { maybe(): Promise<void> };
  signal?: AbortSignal;
  chunkOptions?: Partial<ChunkOptions>;
}

/** Read, chunk and embed in this thread: for tests, benches and the CLI's own process. */
export function preparedHere(o: EmbedOptions): FilePreparer {
  return async (source, storedHash, previous) => {
    let text: string;
    try {
      text = await source.read();
    } catch (e) {
      if (!(e instanceof SkippedSourceError)) throw e;
      return { skipped: e.reason };
    }
    // The file may have changed since it was listed: what is indexed is what was read.
    const hash = hashText(text);
    if (hash === storedHash) return { unchanged: true };
    const { records, reused } = await chunkAndEmbed(source.path, text, o, previous);
    return { hash, size: Buffer.byteLength(text, 'utf8'), records, reused };
  };
}

/**
 * What a chunk's vector is made from besides its file's path (the recipes read the path, the
 * symbol, the kind and the text: embedding-text.ts), so two chunks of one file with the same key
 * have the same vector. The store's model identity names the recipe: vectors of another recipe are
 * never in the same store.
 */
export function vectorKey(chunk: { readonly kind: string; readonly symbol?: string | undefined; readonly content: string }): string {
  // JSON, not a separator: a symbol or a text holding the separator cannot make two chunks one key.
  return JSON.stringify([chunk.kind, chunk.symbol ?? '', chunk.content]);
}

/**
 * One file's chunks with their vectors, embedded in batches (checked for a stop between them); a
 * chunk equal to one of `previous` (same kind, symbol and text) takes its stored vector instead.
 */
export async function chunkAndEmbed(
  path: string,
  text: string,
  o: EmbedOptions,
  previous: readonly StoredVector[] = [],
): Promise<{ records: ChunkRecord[]; reused: number }> {
  const chunks = await chunkFile(path, text, o.chunkOptions);
  const stored = new Map(previous.map((p) => [vectorKey(p), p.vector]));
  const kept = chunks.map((chunk) => {
    const vector = stored.get(vectorKey(chunk));
    return vector?.length === o.embedder.dimensions ? vector : undefined;
  });
  // Each new chunk's text, then its windows (the recipe's): `owner[i]` is the chunk of `texts[i]`.
  const texts: string[] = [];
  const owner: number[] = [];
  chunks.forEach((chunk, c) => {
    if (kept[c]) return;
    for (const t of [o.recipe.text(path, chunk), ...(o.recipe.windows?.(path, chunk) ?? [])]) {
      texts.push(t);
      owner.push(c);
    }
  });
  const vectors: Float32Array[] = [];
  for (let i = 0; i < texts.length; i += o.batchSize) {
    o.signal?.throwIfAborted();
    vectors.push(...(await o.embedder.embed(texts.slice(i, i + o.batchSize), 'document')));
    await o.pulse?.maybe();
  }
  if (vectors.length !== texts.length)
    throw new Error(`${path}: the embedder returned ${vectors.length} vectors for ${texts.length} texts`);
  const byChunk = chunks.map((): Float32Array[] => []);
  vectors.forEach((vector, i) => {
    byChunk[owner[i] as number]?.push(vector);
  });
  let reused = 0;
  const records = chunks.map((chunk, c) => {
    const vector = kept[c];
    if (vector) reused++;
    return { ...chunk, vector: vector ?? meanDirection(byChunk[c] as Float32Array[]) };
  });
  return { records, reused };
}

/** The unit vector along the sum of unit vectors (one vector is returned as it is). */
export function meanDirection(vectors: readonly Float32Array[]): Float32Array {
  const [first] = vectors;
  if (first === undefined) throw new RangeError('no vectors to average');
  if (vectors.length === 1) return first;
  const sum = new Float32Array(first.length);
  for (const v of vectors) for (let d = 0; d < sum.length; d++) (sum[d] as number) += v[d] as number;
  let norm = 0;
  for (const x of sum) norm += x * x;
  norm = Math.sqrt(norm);
  if (norm === 0) return sum;
  for (let d = 0; d < sum.length; d++) (sum[d] as number) /= norm;
  return sum;
}

function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
