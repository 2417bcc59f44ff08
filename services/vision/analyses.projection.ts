import type { Projection } from '../../events/projection.ts';
import type { AnalysisCompletedData, VisionEvent } from './events.ts';

/** What each analysis found, in counts: the history reports read. */
export type AnalysisRecord = Omit<AnalysisCompletedData, 'keyHash'> & { analyzedAt: Date };

type AnalysisDocument = AnalysisRecord & Record<string, unknown>;

export const analysesProjection: Projection<AnalysisDocument, VisionEvent> = {
  name: 'vision-analyses',
  collection: 'vision_analyses',
  handles: ['glm.analysis-completed'],
  documentId: (event) => (event.type === 'glm.analysis-completed' ? event.data.analysisId : null),
  evolve(doc, event) {
    if (event.type !== 'glm.analysis-completed') return doc;
    const { keyHash: _keyHash, ...d } = event.data;
    return { ...d, analyzedAt: event.metadata.occurredAt };
  },
  indexes: [{ key: { customerId: 1 }, name: 'by_customer' }],
};
