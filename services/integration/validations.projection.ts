import type { Projection } from '../../events/projection.ts';
import type { IntegrationEvent, ValidationCompletedData } from './events.ts';

/** Each validation's verdict and counts, for the project report. */
export type ValidationRecord = Omit<ValidationCompletedData, 'keyHash'> & { validatedAt: Date };

type ValidationDocument = ValidationRecord & Record<string, unknown>;

export const validationsProjection: Projection<ValidationDocument, IntegrationEvent> = {
  name: 'integration-validations',
  collection: 'integration_validations',
  handles: ['integration.validation-completed'],
  documentId: (event) => (event.type === 'integration.validation-completed' ? event.data.validationId : null),
  evolve(doc, event) {
    if (event.type !== 'integration.validation-completed') return doc;
    const { keyHash: _keyHash, ...d } = event.data;
    return { ...d, validatedAt: event.metadata.occurredAt };
  },
  indexes: [{ key: { customerId: 1, validatedAt: 1 }, name: 'by_customer_time' }],
};
