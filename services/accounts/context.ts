import type { BoundedContext } from '../platform/context.ts';
import { lazyService } from '../platform/lazy-service.ts';
import { ACCOUNT_EVENTS } from './events.ts';
import { usersProjection } from './users.projection.ts';

export const accountsContext: BoundedContext = {
  name: 'accounts',
  events: ACCOUNT_EVENTS,
  projections: [usersProjection],
  services: [lazyService('accounts', async () => (await import('./accounts.service.ts')).accountsService)],
};
