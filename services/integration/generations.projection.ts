import { logProjection } from '../../events/log-projection.ts';
import type { IntegrationEvent, TestsGeneratedData } from './events.ts';

/** Each generation of tests, for the project report. */
export type GenerationRecord = Omit<TestsGeneratedData, 'keyHash'> & { generatedAt: Date };

export const generationsProjection = logProjection<IntegrationEvent, 'integration.tests-generated', 'keyHash', 'generatedAt'>({
  name: 'integration-generations',
  collection: 'integration_generations',
  type: 'integration.tests-generated',
  id: (d) => d.generationId,
  omit: ['keyHash'],
  at: 'generatedAt',
  indexes: [{ key: { customerId: 1, generatedAt: 1 }, name: 'by_customer_time' }],
});
