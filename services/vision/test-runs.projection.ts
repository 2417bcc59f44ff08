import type { Db, Document } from 'mongodb';
import { projectionCollection } from '../../events/collections.ts';
import type { Projection } from '../../events/projection.ts';
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

type TestRunDocument = TestRun & Record<string, unknown>;

export const testRunsProjection: Projection<TestRunDocument, VisionEvent> = {
  name: 'vision-test-runs',
  collection: 'vision_test_runs',
  handles: ['glm.visual-test-completed'],
  documentId: (event) => (event.type === 'glm.visual-test-completed' ? event.data.runId : null),
  evolve(doc, event) {
    if (event.type !== 'glm.visual-test-completed') return doc;
    const { keyHash: _keyHash, screenshotId: _screenshotId, ...d } = event.data;
    return { ...d, ranAt: event.metadata.occurredAt };
  },
  indexes: [{ key: { customerId: 1, suite: 1, ranAt: -1 }, name: 'by_suite' }],
};

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
