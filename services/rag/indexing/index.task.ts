/**
 * Index work that runs on a worker thread of the indexing pool (services/platform/work), never on
 * the event loop that answers requests: listing a folder or a push (ignore rules are customer
 * input), and reading, parsing and embedding one file. Each call is one task with its own time and
 * heap budget; the model is loaded once per thread and kept for the thread's next tasks.
 */

import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { task } from '../../platform/work/task.ts';
import { OnnxEmbedder } from '../embedding/embedder.ts';
import { defaultModelDir } from '../embedding/model-folder.ts';
import { stillTheFolder } from '../project-path.ts';
import { readContained } from '../sources/contained-read.ts';
import { readPushedFiles } from '../sources/pushed.ts';
import { decodeSource } from '../sources/skip-rules.ts';
import { hashText, isSkipped, type SkipReason } from '../sources/source-file.ts';
import { walkProject } from '../sources/walk.ts';
import type { StoredVector } from '../index-store/types.ts';
import { DEFAULT_RECIPE } from './embedding-text.ts';
import { chunkAndEmbed, type Prepared } from './index-collection.ts';

export interface ListInput {
  /** The collection's folder as stored at setup (a real path), or null for pushed files only. */
  readonly root: string | null;
  readonly pushed: ReadonlyArray<{ path: string; content: string }>;
  readonly maxFileBytes: number;
}

export type Listed =
  | { readonly path: string; readonly hash: string; readonly size: number }
  | { readonly path: string; readonly skipped: SkipReason };

export interface PrepareInput {
  readonly root: string | null;
  readonly path: string;
  /** A pushed file's text; null: read `path` from the folder. */
  readonly text: string | null;
  readonly storedHash: string | undefined;
  /** The stored file's chunks with their vectors: those of chunks the edit left as they were are kept. */
  readonly previous: readonly StoredVector[];
  readonly maxFileBytes: number;
  readonly model: { readonly dir: string | undefined; readonly threads: number };
}

/** The folder is not the one set up any more (replaced by a link, or gone): nothing in it is read. */
class FolderMovedError extends Error {
  constructor() {
    super("the collection's project folder is no longer available as it was set up");
    this.name = 'FolderMovedError';
  }
}

async function folder(root: string): Promise<string> {
  const real = await stillTheFolder(root);
  if (!real) throw new FolderMovedError();
  return real;
}

/** Every pushed file and the folder's files (a pushed path wins), as hashes and skip reasons. */
export async function listSources(input: ListInput): Promise<Listed[]> {
  const entries = readPushedFiles(input.pushed, { maxFileBytes: input.maxFileBytes });
  const listed: Listed[] = entries.map((e) =>
    isSkipped(e) ? { path: e.path, skipped: e.skipped } : { path: e.path, hash: e.hash, size: e.size },
  );
  if (input.root === null) return listed;
  const taken = new Set(listed.map((e) => e.path));
  for await (const e of walkProject(await folder(input.root), { maxFileBytes: input.maxFileBytes })) {
    if (taken.has(e.path)) continue;
    listed.push(isSkipped(e) ? { path: e.path, skipped: e.skipped } : { path: e.path, hash: e.hash, size: e.size });
  }
  return listed;
}

let loaded: { key: string; embedder: Promise<OnnxEmbedder> } | undefined;

function embedderFor(model: PrepareInput['model']): Promise<OnnxEmbedder> {
  const key = `${model.dir ?? ''}\u0000${model.threads}`;
  if (loaded?.key !== key) {
    const embedder = OnnxEmbedder.load(model.dir ?? defaultModelDir(), { intraOpThreads: model.threads });
    embedder.catch(() => (loaded = undefined));
    loaded = { key, embedder };
  }
  return loaded.embedder;
}

/** One file read (inside its folder at the moment of reading), chunked and embedded. */
export async function prepareFile(input: PrepareInput): Promise<Prepared> {
  // A string pushed with a BOM keeps it as U+FEFF; the listing hashed the text without it.
  let text = input.text?.replace(/^\uFEFF/, '') ?? null;
  if (text === null) {
    if (input.root === null) return { skipped: 'unreadable' };
    const root = await folder(input.root);
    // A link inside the folder to a file inside it is followed; the read checks where it really lands.
    const real = await realpath(join(root, input.path)).catch(() => undefined);
    if (real === undefined) return { skipped: 'unreadable' };
    const read = await readContained(root, real, input.maxFileBytes);
    if ('refused' in read) return { skipped: read.refused };
    const decoded = decodeSource(input.path, read.bytes);
    if ('skipped' in decoded) return { skipped: decoded.skipped };
    text = decoded.text;
  }
  const hash = hashText(text);
  if (hash === input.storedHash) return { unchanged: true };
  const embedder = await embedderFor(input.model);
  const { records, reused } = await chunkAndEmbed(input.path, text, { embedder, batchSize: 8, recipe: DEFAULT_RECIPE }, input.previous);
  return { hash, size: Buffer.byteLength(text, 'utf8'), records, reused };
}

/** A query's vector: the text is the customer's, so it is embedded here and not on the request loop. */
export async function embedQuery(input: { text: string; model: PrepareInput['model'] }): Promise<Float32Array> {
  const [vector] = await (await embedderFor(input.model)).embed([input.text], 'query');
  if (!vector) throw new Error('the model gave no vector for the query');
  return vector;
}

export const EMBED_QUERY = task<{ text: string; model: PrepareInput['model'] }, Float32Array>(new URL(import.meta.url), 'embedQuery');
export const LIST_SOURCES = task<ListInput, Listed[]>(new URL(import.meta.url), 'listSources');
export const PREPARE_FILE = task<PrepareInput, Prepared>(new URL(import.meta.url), 'prepareFile');
