import type { Projection } from '../../events/projection.ts';
import type { IntegrationEvent, TestsGeneratedData } from './events.ts';

/** Each generation of tests, for the project report. */
export type GenerationRecord = Omit<TestsGeneratedData, 'keyHash'> & { generatedAt: Date };

type GenerationDocument = GenerationRecord & Record<string, unknown>;

export const generationsProjection: Projection<GenerationDocument, IntegrationEvent> = {
  name: 'integration-generations',
  collection: 'integration_generations',
  handles: ['integration.tests-generated'],
  documentId: (event) => (event.type === 'integration.tests-generated' ? event.data.generationId : null),
  evolve(doc, event) {
    if (event.type !== 'integration.tests-generated') return doc;
    const { keyHash: _keyHash, ...d } = event.data;
    return { ...d, generatedAt: event.metadata.occurredAt };
  },
  indexes: [{ key: { customerId: 1, generatedAt: 1 }, name: 'by_customer_time' }],
};
