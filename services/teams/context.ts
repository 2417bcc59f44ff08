import type { BoundedContext } from '../platform/context.ts';
import { TEAM_EVENTS } from './events.ts';
import { workspacesProjection } from './workspaces.projection.ts';

/**
 * Team workspaces: members, roles, invitations and single sign-on of a team subscription. No
 * service of its own: the keys service answers its routes (/teams, /team/...), runs its projection
 * and mints members' keys, beside the subscription's key they share a quota with.
 */
export const teamsContext: BoundedContext = {
  name: 'teams',
  events: TEAM_EVENTS,
  projections: [workspacesProjection],
  services: [],
};
