import { logProjection } from '../../events/log-projection.ts';
import type { AnalysisCompletedData, VisionEvent } from './events.ts';

/** What each analysis found, in counts: the history reports read. */
export type AnalysisRecord = Omit<AnalysisCompletedData, 'keyHash'> & { analyzedAt: Date };

export const analysesProjection = logProjection<VisionEvent, 'glm.analysis-completed', 'keyHash', 'analyzedAt'>({
  name: 'vision-analyses',
  collection: 'vision_analyses',
  type: 'glm.analysis-completed',
  id: (d) => d.analysisId,
  omit: ['keyHash'],
  at: 'analyzedAt',
  indexes: [{ key: { customerId: 1 }, name: 'by_customer' }],
});
