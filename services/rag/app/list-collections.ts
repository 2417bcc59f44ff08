import type { Caller } from '../../premium/caller.ts';
import { collectionsOf } from '../collections.projection.ts';
import { getJob } from '../jobs.projection.ts';
import type { RagDeps } from './deps.ts';
import { jobStatus, type JobStatus } from './index-status.ts';

export interface CollectionSummary {
  collectionName: string;
  projectPath: string | null;
  vectorDB: string;
  files: number;
  chunks: number;
  indexVersion: number;
  indexedAt: string | null;
  lastJob: JobStatus | null;
}

/**
 * GET /api/rag/collections: the caller's collections by name, each with its counts and where its
 * last index job stands (the customer console's collections page reads it). Read from the
 * projections only: listing spends nothing.
 */
export async function listCollections(
  deps: Pick<RagDeps, 'db'>,
  caller: Caller,
): Promise<{ success: true; collections: CollectionSummary[] }> {
  const collections = (await collectionsOf(deps.db, caller.customerId)).sort((a, b) => a.collectionName.localeCompare(b.collectionName));
  const summaries = await Promise.all(
    collections.map(async (c) => {
      const job = c.lastJobId ? await getJob(deps.db, c.lastJobId) : null;
      return {
        collectionName: c.collectionName,
        projectPath: c.projectPath,
        vectorDB: c.vectorDB,
        files: c.files,
        chunks: c.chunks,
        indexVersion: c.indexVersion,
        indexedAt: c.indexedAt?.toISOString() ?? null,
        lastJob: job && job.customerId === caller.customerId ? jobStatus(job) : null,
      };
    }),
  );
  return { success: true, collections: summaries };
}
