/**
 * What the ranking tools (tune.ts, learn-rank.ts) share: a development set by name, held-out sets
 * refused, and its corpus indexed once into a throwaway SQLite index with document vectors from the
 * bench's embedding cache. Never used for a reported figure.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { OnnxEmbedder } from '../../services/rag/embedding/embedder.ts';
import { defaultModelDir } from '../../services/rag/embedding/model-folder.ts';
import type { CollectionIndex } from '../../services/rag/index-store/collection-index.ts';
import { DEFAULT_RECIPE, embeddingIdentity } from '../../services/rag/indexing/embedding-text.ts';
import { DEFAULT_BATCH_SIZE, indexCollection, preparedHere } from '../../services/rag/indexing/index-collection.ts';
import { walkProject } from '../../services/rag/sources/walk.ts';
import { corpusDirectory } from './corpus.ts';
import { CachingEmbedder } from './embedding-cache.ts';
import { openEngines } from './engines.ts';
import { EVAL_FOLDER } from './eval-files.ts';
import { type EvalSet, loadEvalSet } from './eval-set.ts';

export const BENCH_CACHE_DIR = join(homedir(), '.cache', 'svc', 'bench-rag');

/** The model, on two threads, and the document vectors kept between runs. */
export async function developmentEmbedders(): Promise<{ onnx: OnnxEmbedder; cache: CachingEmbedder }> {
  const onnx = await OnnxEmbedder.load(process.env.EMBEDDING_MODEL_DIR || defaultModelDir(), { intraOpThreads: 2 });
  return { onnx, cache: new CachingEmbedder(onnx, join(BENCH_CACHE_DIR, `${onnx.folder.manifest.name}.vectors`)) };
}

/** A set by name (`zap-1.27.0`) or file name in this folder; a held-out set is refused. */
export function developmentSet(name: string): { file: string; set: EvalSet } {
  const file = join(EVAL_FOLDER, name.endsWith('.json') ? name : `${name}.json`);
  const set = loadEvalSet(file);
  if (set.heldOut) throw new Error(`${file} is held out: nothing is tuned or learned on it`);
  return { file, set };
}

/** Indexes the set's corpus into a SQLite index made for `use`, removed afterwards. */
export async function withIndexedSet<T>(
  { file, set }: { file: string; set: EvalSet },
  { onnx, cache }: { onnx: OnnxEmbedder; cache: CachingEmbedder },
  use: (index: CollectionIndex) => Promise<T>,
): Promise<T> {
  const root = await corpusDirectory(set.corpus, file);
  const work = mkdtempSync(join(tmpdir(), 'rag-dev-'));
  const opened = await openEngines(['sqlite'], {
    work,
    model: embeddingIdentity(onnx.folder.manifest.name, onnx.dimensions),
    log: () => undefined,
  });
  try {
    const prepare = preparedHere({ embedder: cache, batchSize: DEFAULT_BATCH_SIZE, recipe: DEFAULT_RECIPE });
    const index = (opened.engines[0] as (typeof opened.engines)[number]).index;
    await indexCollection({ store: index, embedder: cache, files: walkProject(root), prepare });
    cache.save();
    return await use(index);
  } finally {
    await opened.close();
    rmSync(work, { recursive: true, force: true });
  }
}
