import type { Db } from 'mongodb';
import { projectionCollection } from '../../events/collections.ts';
import { findProjected, type Projection } from '../../events/projection.ts';
import type { VisionEvent } from './events.ts';

/** The screenshot a suite's visual check is compared with. */
export interface Baseline {
  customerId: string;
  suite: string;
  check: string;
  screenshotId: string;
  reason: 'first_run' | 'accepted';
  acceptedAt: Date;
}

type BaselineDocument = Baseline & Record<string, unknown>;

/** Per customer, suite and check: JSON-encoded so no separator in a name can make two ids meet. */
export const baselineIdOf = (customerId: string, suite: string, check: string): string => JSON.stringify([customerId, suite, check]);

export const baselinesProjection: Projection<BaselineDocument, VisionEvent> = {
  name: 'vision-baselines',
  collection: 'vision_baselines',
  handles: ['glm.baseline-accepted'],
  documentId: (event) =>
    event.type === 'glm.baseline-accepted' ? baselineIdOf(event.data.customerId, event.data.suite, event.data.check) : null,
  evolve(doc, event) {
    if (event.type !== 'glm.baseline-accepted') return doc;
    return { ...event.data, acceptedAt: event.metadata.occurredAt };
  },
  // Whether a screenshot its customer wants deleted is a baseline (app/delete-stored.ts).
  indexes: [{ key: { customerId: 1, screenshotId: 1 }, name: 'by_screenshot' }],
};

export async function getBaseline(db: Db, customerId: string, suite: string, check: string): Promise<Baseline | null> {
  return findProjected<Baseline>(await projectionCollection(db, baselinesProjection.collection), baselineIdOf(customerId, suite, check));
}
