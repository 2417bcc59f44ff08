import { randomUUID } from 'node:crypto';
import { newEvent } from '../../../events/envelope.ts';
import { publishAndApply } from '../../../events/own-events.ts';
import { notFound, ragError, type Caller } from '../../premium/caller.ts';
import { collectionIdOf, getCollection } from '../collections.projection.ts';
import type { FileRef, IndexRequested } from '../events.ts';
import type { IndexInput } from '../input.ts';
import { getJob, jobsProjection, type IndexJob } from '../jobs.projection.ts';
import { WorkQueueFull } from '../../platform/work/work-pool.ts';
import { IndexBudgetError } from '../retrieval.ts';
import type { RagDeps } from './deps.ts';
import { checkQuota } from '../../premium/meter.ts';

export interface IndexAccepted {
  success: true;
  jobId: string;
  status: 'queued';
}

/** A pushed path: relative, `/`-separated, no `.`/`..` segment, nothing that names another place. */
export function validPushedPath(path: string): boolean {
  if (path.startsWith('/') || path.includes('\\') || path.includes('\u0000')) return false;
  return path.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}

/**
 * POST /api/rag/index and the `rag_index` tool: a job for the indexer, over the collection's
 * project folder, or over files the client pushes (stored first, so the job can read them and a
 * rebuild can use them again). The answer is the job; `wait` answers once it has ended.
 */
export async function requestIndex(deps: RagDeps, caller: Caller, input: IndexInput, correlationId: string): Promise<IndexAccepted> {
  const collectionId = collectionIdOf(caller.customerId, input.collectionName);
  const collection = await getCollection(deps.db, collectionId);
  if (!collection) throw notFound(`collection ${input.collectionName}`);
  let files: FileRef[] = [];
  let candidates: number;
  if (input.files) {
    if (input.files.length === 0)
      throw ragError(400, 'BAD_REQUEST', 'files is empty: push at least one file, or leave files out to index the project folder');
    if (input.files.length > deps.config.rag.pushMaxFiles)
      throw ragError(413, 'PAYLOAD_TOO_LARGE', `at most ${deps.config.rag.pushMaxFiles} files per push`);
    const bad = input.files.find((f) => !validPushedPath(f.path));
    if (bad) throw ragError(400, 'INVALID_PATH', 'files[].path must be relative, with / separators and no . or .. segments');
    if (input.files.some((f) => f.content.includes('\u0000')))
      throw ragError(400, 'BINARY_CONTENT', 'files[].content must be text: binary files are not indexed');
    const big = input.files.find((f) => Buffer.byteLength(f.content, 'utf8') > deps.config.rag.maxFileBytes);
    if (big) throw ragError(413, 'PAYLOAD_TOO_LARGE', `a file is over RAG_MAX_FILE_BYTES (${deps.config.rag.maxFileBytes} bytes)`);
    candidates = input.files.length;
    if (caller.tier) {
      const limit = deps.config.rag.limits.pushedBytes[caller.tier];
      const adding = input.files.reduce((n, f) => n + Buffer.byteLength(f.content, 'utf8'), 0);
      if ((await deps.pushed.bytesOf(caller.customerId)) + adding > limit) {
        throw ragError(
          413,
          'STORAGE_LIMIT',
          `your ${caller.tier} plan keeps ${Math.floor(limit / 1048576)} MB of pushed sources; push fewer files or upgrade`,
          {
            limitBytes: limit,
            upgrade: deps.config.urls.pricing,
          },
        );
      }
    }
  } else {
    if (!collection.projectPath) throw ragError(409, 'NO_PROJECT_PATH', 'this collection has no project folder: push its files instead');
    candidates = await countCandidates(deps, collection.projectPath, caller.customerId);
  }
  // The indexer records what it really indexes (unchanged files cost nothing); room for them all is checked now.
  checkQuota(deps, caller, 'filesIndexed', candidates);
  if (input.files) files = await deps.pushed.put(collectionId, input.files, caller.customerId);

  const jobId = randomUUID();
  const event: IndexRequested = newEvent(
    'rag.index-requested',
    {
      jobId,
      collectionId,
      customerId: caller.customerId,
      collectionName: input.collectionName,
      source: input.files ? 'files' : 'path',
      files,
      keyHash: caller.keyHash,
    },
    { correlationId },
  );
  await publishAndApply(deps.publisher, deps.db, jobsProjection, [event]);
  return { success: true, jobId, status: 'queued' };
}

/** Files the folder would index, counted on the indexing pool (its ignore rules are the customer's). */
async function countCandidates(deps: RagDeps, projectPath: string, customerId: string): Promise<number> {
  try {
    return await deps.retrieval.countCandidates(projectPath, customerId);
  } catch (err) {
    if (err instanceof WorkQueueFull) throw ragError(429, 'TOO_BUSY', 'too much of your indexing work is waiting; try again shortly');
    if (err instanceof IndexBudgetError) throw ragError(422, 'SOURCES_UNUSABLE', err.message);
    throw err;
  }
}

/** The job once it has ended, or as it stands when `timeoutMs` runs out. */
export async function waitForJob(
  deps: Pick<RagDeps, 'db'>,
  jobId: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<IndexJob | null> {
  const deadline = Date.now() + timeoutMs;
  let delay = 50;
  for (;;) {
    const job = await getJob(deps.db, jobId);
    if (!job || job.status === 'completed' || job.status === 'failed' || Date.now() > deadline || signal?.aborted) return job;
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 500);
  }
}
