import type { Projection } from '../../events/projection.ts';
import type { ServiceModule } from './service.ts';

/** Every service `svc run` knows, in start order. Contexts register here as they land. */
export const SERVICES: readonly ServiceModule[] = [];

/** Every projection `svc replay` can rebuild. */
export const PROJECTIONS: readonly Projection[] = [];
