import type { EventDefinition } from '../../events/catalog.ts';
import type { Projection } from '../../events/projection.ts';
import type { ServiceEntry } from './lazy-service.ts';

/**
 * A bounded context as the platform sees it: the events it publishes (their topics, schemas and
 * keys), the projections ops can replay, and the services `svc run` can start, in start order (each loads its code when it starts).
 * Each context declares one in its own folder (`services/<context>/context.ts`); the registry
 * lists them.
 */
export interface BoundedContext {
  name: string;
  events: readonly EventDefinition[];
  projections: readonly Projection[];
  services: readonly ServiceEntry[];
}
