import type { BoundedContext } from '../platform/context.ts';
import { ACCOUNT_EVENTS } from './events.ts';
import { accountsService } from './accounts.service.ts';
import { usersProjection } from './users.projection.ts';

export const accountsContext: BoundedContext = {
  name: 'accounts',
  events: ACCOUNT_EVENTS,
  projections: [usersProjection],
  services: [accountsService],
};
