import { randomUUID } from 'node:crypto';
import { newEvent } from '../../../events/envelope.ts';
import { publishAndApply } from '../../../events/own-events.ts';
import { HttpError } from '../../platform/http/errors.ts';
import { actedBy, notFound, ragError, type Caller } from '../../premium/caller.ts';
import { collectionIdOf, getCollection } from '../collections.projection.ts';
import type { FileRef, IndexRequested } from '../events.ts';
import type { IndexInput } from '../input.ts';
import { JobSlots } from '../job-slots.ts';
import { getJob, jobsProjection, type IndexJob } from '../jobs.projection.ts';
import { WorkQueueFull } from '../../platform/work/work-pool.ts';
import { IndexBudgetError } from '../retrieval.ts';
import { InvalidSourcePathError, normalizeSourcePath } from '../sources/paths.ts';
import { checkServedHere, servedVectorDb } from '../vector-db.ts';
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
  checkServedHere(collection, servedVectorDb(deps.config.rag.indexEngine));
  if (input.files) checkPush(deps, input.files);
  else if (!collection.projectPath) throw ragError(409, 'NO_PROJECT_PATH', 'this collection has no project folder: push its files instead');

  // The cheap refusals first; then a slot, before anything costly is read or stored.
  const jobId = randomUUID();
  const slots = new JobSlots(deps.db);
  if (caller.tier) {
    const limit = deps.config.rag.limits.pendingJobs[caller.tier];
    if (!(await slots.claim(caller.customerId, jobId, limit))) {
      throw new HttpError(
        429,
        'TOO_MANY_JOBS',
        `your ${caller.tier} plan runs ${limit} index jobs at a time and that many are queued or running; ` +
          'try again when one has ended (GET /api/rag/index/{jobId})',
        { details: { limit }, headers: { 'Retry-After': '5' } },
      );
    }
  }
  try {
    let files: FileRef[] = [];
    if (input.files) await checkStorage(deps, caller, input.files);
    const candidates = input.files ? input.files.length : await countCandidates(deps, collection.projectPath as string, caller.customerId);
    // The indexer records what it really indexes (unchanged files cost nothing); room for them all is checked now.
    checkQuota(deps, caller, 'filesIndexed', candidates);
    if (input.files) files = await deps.pushed.put(collectionId, input.files, caller.customerId);
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
        ...actedBy(caller),
      },
      { correlationId },
    );
    await publishAndApply(deps.publisher, deps.db, jobsProjection, [event]);
  } catch (err) {
    // No job: nothing would free the slot. (Published after all, the job runs one over the bound, once.)
    await slots.release(jobId).catch(() => undefined);
    throw err;
  }
  return { success: true, jobId, status: 'queued' };
}

/** A push the indexer would refuse, refused now: its paths by the indexer's own rules (sources/paths.ts). */
function checkPush(deps: RagDeps, files: NonNullable<IndexInput['files']>): void {
  if (files.length === 0)
    throw ragError(400, 'BAD_REQUEST', 'files is empty: push at least one file, or leave files out to index the project folder');
  if (files.length > deps.config.rag.pushMaxFiles)
    throw ragError(413, 'PAYLOAD_TOO_LARGE', `at most ${deps.config.rag.pushMaxFiles} files per push`);
  const seen = new Set<string>();
  for (const file of files) {
    if (!validPushedPath(file.path))
      throw ragError(400, 'INVALID_PATH', 'files[].path must be relative, with / separators and no . or .. segments');
    let path: string;
    try {
      path = normalizeSourcePath(file.path);
    } catch (err) {
      if (err instanceof InvalidSourcePathError) throw ragError(400, 'INVALID_PATH', `files[].path: ${err.message}`);
      throw err;
    }
    if (seen.has(path)) throw ragError(400, 'INVALID_PATH', `files[].path: ${new InvalidSourcePathError(file.path, 'duplicate').message}`);
    seen.add(path);
  }
  if (files.some((f) => f.content.includes('\u0000')))
    throw ragError(400, 'BINARY_CONTENT', 'files[].content must be text: binary files are not indexed');
  if (files.some((f) => Buffer.byteLength(f.content, 'utf8') > deps.config.rag.maxFileBytes))
    throw ragError(413, 'PAYLOAD_TOO_LARGE', `a file is over RAG_MAX_FILE_BYTES (${deps.config.rag.maxFileBytes} bytes)`);
}

/** The plan's room for pushed sources (RAG_PUSHED_MB), with what this push adds. */
async function checkStorage(deps: RagDeps, caller: Caller, files: NonNullable<IndexInput['files']>): Promise<void> {
  if (!caller.tier) return;
  const limit = deps.config.rag.limits.pushedBytes[caller.tier];
  const adding = files.reduce((n, f) => n + Buffer.byteLength(f.content, 'utf8'), 0);
  if ((await deps.pushed.bytesOf(caller.customerId)) + adding <= limit) return;
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
  /** Each state read (an MCP call's progress notifications). */
  onPoll?: (job: IndexJob) => Promise<void>,
): Promise<IndexJob | null> {
  const deadline = Date.now() + timeoutMs;
  let delay = 50;
  for (;;) {
    const job = await getJob(deps.db, jobId);
    if (job && onPoll) await onPoll(job);
    if (!job || job.status === 'completed' || job.status === 'failed' || Date.now() > deadline || signal?.aborted) return job;
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 500);
  }
}
