import type { BoundedContext } from '../platform/context.ts';
import { INTEGRATION_EVENTS } from './events.ts';
import { generationsProjection } from './generations.projection.ts';
import { validationsProjection } from './validations.projection.ts';

/**
 * Validating a component against what it should do, generating its tests, and reporting on a
 * project: retrieval (code evidence) and the browser (page evidence) together. No service of its
 * own: the rag service serves /api/integration/* and the MCP server the integration_* tools.
 */
export const integrationContext: BoundedContext = {
  name: 'integration',
  events: INTEGRATION_EVENTS,
  projections: [validationsProjection, generationsProjection],
  services: [],
};
