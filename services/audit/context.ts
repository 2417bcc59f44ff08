import type { BoundedContext } from '../platform/context.ts';
import { auditProjection } from './audit.projection.ts';

/**
 * The audit log: no events or service of its own. Its projection reads the accounts, keys, billing
 * and rag contexts' events; the keys service runs it and answers GET /audit.
 */
export const auditContext: BoundedContext = {
  name: 'audit',
  events: [],
  projections: [auditProjection],
  services: [],
};
