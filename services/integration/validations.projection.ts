import { logProjection } from '../../events/log-projection.ts';
import type { IntegrationEvent, ValidationCompletedData } from './events.ts';

/** Each validation's verdict and counts, for the project report. */
export type ValidationRecord = Omit<ValidationCompletedData, 'keyHash'> & { validatedAt: Date };

export const validationsProjection = logProjection<IntegrationEvent, 'integration.validation-completed', 'keyHash', 'validatedAt'>({
  name: 'integration-validations',
  collection: 'integration_validations',
  type: 'integration.validation-completed',
  id: (d) => d.validationId,
  omit: ['keyHash'],
  at: 'validatedAt',
  indexes: [{ key: { customerId: 1, validatedAt: 1 }, name: 'by_customer_time' }],
});
