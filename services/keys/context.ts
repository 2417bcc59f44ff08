import type { BoundedContext } from '../platform/context.ts';
import { lazyService } from '../platform/lazy-service.ts';
import { KEY_EVENTS } from './events.ts';
import { keysProjection } from './keys.projection.ts';
import { USAGE_EVENTS, usageProjection } from './usage.ts';

export const keysContext: BoundedContext = {
  name: 'keys',
  events: [...KEY_EVENTS, ...USAGE_EVENTS],
  projections: [keysProjection, usageProjection],
  services: [lazyService('keys', async () => (await import('./keys.service.ts')).keysService)],
};
