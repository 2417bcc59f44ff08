import type { Db, Document } from 'mongodb';
import { projectionCollection } from '../../../events/collections.ts';
import { currentPeriod } from '../../keys/usage.ts';
import type { Caller } from '../../premium/caller.ts';
import { collectionsOf } from '../../rag/collections.projection.ts';
import { jobsProjection, type IndexJob } from '../../rag/jobs.projection.ts';
import { queriesProjection } from '../../rag/queries.projection.ts';
import { analysesProjection } from '../../vision/analyses.projection.ts';
import { screenshotsProjection, type Screenshot } from '../../vision/screenshots.projection.ts';
import { testRunsProjection } from '../../vision/test-runs.projection.ts';
import { generationsProjection } from '../generations.projection.ts';
import type { ReportInput } from '../input.ts';
import { validationsProjection, type ValidationRecord } from '../validations.projection.ts';
import { atOrAfter } from './report-figures.ts';
import {
  collectionSummaries,
  generationSummary,
  indexingFigures,
  queryFigures,
  usageFigures,
  validationSummary,
  visionFigures,
  visualTestSummary,
  type AnalysisFacts,
  type GenerationFacts,
  type QueryFacts,
  type TestRunFacts,
} from './report-sections.ts';
import type { ProjectReport, ReportMetrics } from './report.types.ts';

const BOOKKEEPING = { _id: 0, _v: 0, _pos: 0, _deleted: 0 } as const;
const only = (...fields: string[]): Document => ({ _id: 0, ...Object.fromEntries(fields.map((f) => [f, 1])) });

/**
 * A report reads at most this many of a customer's records of each kind, the newest: a customer who
 * has run a million queries gets figures over the latest ones, not a process out of memory.
 */
export const REPORT_RECORDS_MAX = 5000;

/**
 * The caller's newest documents of one projection (by `newestBy`) with the fields asked for, at most
 * REPORT_RECORDS_MAX. One equality find on customerId, the rest (since, collection) filtered here:
 * FerretDB 1.24 pushes equality down to its storage and answers range and `$in` filters by decoding
 * the whole collection anyway.
 */
async function ownRecords<T extends Document>(
  db: Db,
  logical: string,
  customerId: string,
  fields: Document,
  newestBy: string,
): Promise<T[]> {
  const collection = await projectionCollection(db, logical);
  return collection
    .find({ customerId, _deleted: { $ne: true } } as Document)
    .sort({ [newestBy]: -1 })
    .limit(REPORT_RECORDS_MAX)
    .project<T>(fields)
    .toArray();
}

/**
 * The figures of POST /api/integration/report, from the projections of the caller's own events
 * only. `since` applies to every record of something that happened; the collections are where each
 * index stands now, so they are listed whatever `since` says.
 */
export async function gatherReport(db: Db, caller: Caller, input: ReportInput, now: Date = new Date()): Promise<ProjectReport> {
  const { customerId } = caller;
  const since = input.since === undefined ? null : new Date(input.since);
  const recent = atOrAfter(since);
  const inCollection = (name: string): boolean => input.collectionName === undefined || name === input.collectionName;

  const [collections, runs, validations, generations, metrics] = await Promise.all([
    collectionsOf(db, customerId),
    ownRecords<TestRunFacts>(
      db,
      testRunsProjection.collection,
      customerId,
      only('runId', 'suite', 'url', 'passed', 'failed', 'ranAt'),
      'ranAt',
    ),
    ownRecords<ValidationRecord>(db, validationsProjection.collection, customerId, BOOKKEEPING, 'validatedAt'),
    ownRecords<GenerationFacts & { generatedAt: Date }>(
      db,
      generationsProjection.collection,
      customerId,
      only('testType', 'cases', 'generatedAt'),
      'generatedAt',
    ),
    input.includeMetrics ? gatherMetrics(db, caller, { recent, inCollection }, now) : undefined,
  ]);

  return {
    success: true,
    projectName: input.projectName,
    collectionName: input.collectionName ?? null,
    generatedAt: now.toISOString(),
    since: since?.toISOString() ?? null,
    collections: collectionSummaries(collections.filter((c) => inCollection(c.collectionName))),
    ...(metrics ? { metrics } : {}),
    visualTests: visualTestSummary(runs.filter((r) => recent(r.ranAt))),
    validations: validationSummary(validations.filter((v) => recent(v.validatedAt))),
    generations: generationSummary(generations.filter((g) => recent(g.generatedAt))),
  };
}

interface Selection {
  recent: (date: Date | null | undefined) => boolean;
  inCollection: (collectionName: string) => boolean;
}

async function gatherMetrics(db: Db, caller: Caller, { recent, inCollection }: Selection, now: Date): Promise<ReportMetrics> {
  const { customerId } = caller;
  const [jobs, queries, captures, analyses] = await Promise.all([
    ownRecords<IndexJob>(db, jobsProjection.collection, customerId, BOOKKEEPING, 'requestedAt'),
    ownRecords<QueryFacts>(
      db,
      queriesProjection.collection,
      customerId,
      only('collectionName', 'cached', 'durationMs', 'servedAt'),
      'servedAt',
    ),
    ownRecords<Pick<Screenshot, 'capturedAt'>>(db, screenshotsProjection.collection, customerId, only('capturedAt'), 'capturedAt'),
    ownRecords<AnalysisFacts & { analyzedAt: Date }>(
      db,
      analysesProjection.collection,
      customerId,
      only('findings', 'findingTypes', 'analyzedAt'),
      'analyzedAt',
    ),
  ]);
  return {
    // A job counts from when it was asked for: requestedAt is set on every job, finishedAt only on
    // those that ended, so a run still going since `since` is counted too.
    indexing: indexingFigures(jobs.filter((j) => recent(j.requestedAt) && inCollection(j.collectionName))),
    queries: queryFigures(queries.filter((q) => recent(q.servedAt) && inCollection(q.collectionName))),
    vision: visionFigures(
      captures.filter((c) => recent(c.capturedAt)).length,
      analyses.filter((a) => recent(a.analyzedAt)),
    ),
    usage: usageFigures(caller.usage, currentPeriod(now.getTime())),
  };
}
