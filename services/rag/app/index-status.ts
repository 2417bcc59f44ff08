import { notFound, type Caller } from '../../premium/caller.ts';
import { getJob, type IndexJob } from '../jobs.projection.ts';
import type { RagDeps } from './deps.ts';

export interface JobStatus {
  jobId: string;
  status: IndexJob['status'];
  collectionName: string;
  filesIndexed: number;
  filesUnchanged: number;
  filesSkipped: number;
  filesRemoved: number;
  chunks: number;
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number | null;
  error?: string;
}

export function jobStatus(job: IndexJob): JobStatus {
  return {
    jobId: job.jobId,
    status: job.status,
    collectionName: job.collectionName,
    filesIndexed: job.filesIndexed,
    filesUnchanged: job.filesUnchanged,
    filesSkipped: job.filesSkipped,
    filesRemoved: job.filesRemoved,
    chunks: job.chunks,
    startedAt: job.startedAt?.toISOString() ?? null,
    finishedAt: job.finishedAt?.toISOString() ?? null,
    durationMs: job.durationMs,
    ...(job.error ? { error: job.error } : {}),
  };
}

const JOB_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** GET /api/rag/index/{jobId} and the `rag_index_status` tool; another customer's job is not found. */
export async function indexStatus(deps: Pick<RagDeps, 'db'>, caller: Caller, jobId: string): Promise<JobStatus> {
  // Every job id is a UUID (request-index.ts); anything else is not looked up at all: a NUL or a lone
  // surrogate in a query is an error of FerretDB's PostgreSQL backend, not a job that is absent.
  const job = JOB_ID.test(jobId) ? await getJob(deps.db, jobId) : null;
  if (!job || job.customerId !== caller.customerId) throw notFound(`job ${jobId}`);
  return jobStatus(job);
}
