import { randomUUID } from 'node:crypto';
import type { Db } from 'mongodb';
import { newEvent, type Causation } from '../../events/envelope.ts';
import { publishAndApply } from '../../events/own-events.ts';
import type { EventPublisher } from '../../events/publisher.ts';
import type { MemberRole, TeamMemberJoined } from './events.ts';
import { findTeam, workspacesProjection, type Member } from './workspaces.projection.ts';

export interface JoinInput {
  subscriptionId: string;
  userId: string;
  email: string;
  role: MemberRole;
  via: 'invitation' | 'sso';
  invitationId: string | null;
}

/**
 * Publishes and applies team.member-joined, then reads the workspace back: the member it holds for
 * this account (this join's, or an earlier one's), or null when the workspace refused the join
 * (the invitation was used or withdrawn meanwhile, or the workspace is full). The member's own key
 * is minted from the event by the keys service and e-mailed to them.
 */
export async function joinWorkspace(
  deps: { db: Db; publisher: Pick<EventPublisher, 'publishOrdered'> },
  input: JoinInput,
  cause: Causation,
): Promise<Member | null> {
  const event: TeamMemberJoined = newEvent('team.member-joined', { ...input, membershipId: randomUUID() }, cause);
  await publishAndApply(deps.publisher, deps.db, workspacesProjection, [event]);
  const team = await findTeam(deps.db, input.subscriptionId);
  return team?.members.find((m) => m.userId === input.userId) ?? null;
}
