import type { BoundedContext } from '../platform/context.ts';
import { KEY_EVENTS } from './events.ts';
import { keysProjection } from './keys.projection.ts';
import { keysService } from './keys.service.ts';
import { USAGE_EVENTS, usageProjection } from './usage.ts';

export const keysContext: BoundedContext = {
  name: 'keys',
  events: [...KEY_EVENTS, ...USAGE_EVENTS],
  projections: [keysProjection, usageProjection],
  services: [keysService],
};
