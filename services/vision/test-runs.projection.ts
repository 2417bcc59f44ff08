import type { Db, Document } from 'mongodb';
import { projectionCollection } from '../../events/collections.ts';
import { logProjection } from '../../events/log-projection.ts';
import type { CheckResultData, VisionEvent } from './events.ts';

/** One run of a test suite, for the accept operation (the latest run) and reports (the history). */
export interface TestRun {
  runId: string;
  customerId: string;
  suite: string;
  url: string;
  passed: number;
  failed: number;
  results: CheckResultData[];
  durationMs: number;
  ranAt: Date;
}

export const testRunsProjection = logProjection<VisionEvent, 'glm.visual-test-completed', 'keyHash' | 'screenshotId', 'ranAt'>({
  name: 'vision-test-runs',
  collection: 'vision_test_runs',
  type: 'glm.visual-test-completed',
  id: (d) => d.runId,
  omit: ['keyHash', 'screenshotId'],
  at: 'ranAt',
  indexes: [
    { key: { customerId: 1, suite: 1, ranAt: -1 }, name: 'by_suite' },
    { key: { customerId: 1, ranAt: -1 }, name: 'by_customer_time' },
  ],
});

/** This customer's most recent runs, newest first. */
export async function recentRuns(db: Db, customerId: string, limit: number): Promise<TestRun[]> {
  const collection = await projectionCollection(db, testRunsProjection.collection);
  return collection
    .find({ customerId, _deleted: { $ne: true } } as Document)
    .project<TestRun>({ _id: 0, _v: 0, _pos: 0, _deleted: 0 })
    .sort({ ranAt: -1 })
    .limit(limit)
    .toArray();
}

/** The suite's most recent run of this customer's, or null. */
export async function latestRun(db: Db, customerId: string, suite: string): Promise<TestRun | null> {
  const collection = await projectionCollection(db, testRunsProjection.collection);
  const [doc] = await collection
    .find({ customerId, suite, _deleted: { $ne: true } } as Document)
    .project<TestRun>({ _id: 0, _v: 0, _pos: 0, _deleted: 0 })
    .sort({ ranAt: -1 })
    .limit(1)
    .toArray();
  return doc ?? null;
}

/** One run of this customer's by its id, or null (another customer's run is null too). */
export async function runOf(db: Db, customerId: string, runId: string): Promise<TestRun | null> {
  const collection = await projectionCollection(db, testRunsProjection.collection);
  return collection.findOne<TestRun>({ _id: runId, customerId, _deleted: { $ne: true } } as Document, {
    projection: { _id: 0, _v: 0, _pos: 0, _deleted: 0 },
  });
}
