import type { Document } from 'mongodb';
import type { DeliveredEvent } from '../../events/envelope.ts';
import type { StoredDocument } from '../../events/projection.ts';
import type { TeamMemberInvited, TeamSsoDomainProofRequested } from '../teams/events.ts';
import { positionApplied } from './key-ready.ts';

export type TeamLinkEvent = TeamMemberInvited | TeamSsoDomainProofRequested;

/**
 * Whether the workspaces projection answers the link this event's e-mail carries (pure): the
 * workspace holds the invitation or the domain proof, or has applied the event's position (it
 * was then settled, trimmed or not adopted, and the link is answered as such). Until then a person
 * who follows the link at once is told it does not exist: the invitation's accept answered 404
 * when its e-mail arrived before the projection had it (the fuzz run's set-up saw it twice).
 */
export function teamLinkApplied(
  stored: StoredDocument<Document> | null,
  event: Pick<DeliveredEvent<TeamLinkEvent>, 'type' | 'data' | 'position'>,
): boolean {
  if (!stored) return false;
  if (!stored._deleted) {
    if (event.type === 'team.member-invited') {
      const invitations = stored.invitations as { invitationId: string }[] | undefined;
      const { invitationId } = event.data as TeamMemberInvited['data'];
      if (invitations?.some((i) => i.invitationId === invitationId)) return true;
    } else {
      const proofs = (stored.sso as { proofs?: { tokenHash: string }[] } | null | undefined)?.proofs;
      const { tokenHash } = event.data as TeamSsoDomainProofRequested['data'];
      if (proofs?.some((p) => p.tokenHash === tokenHash)) return true;
    }
  }
  return positionApplied(stored, event.position);
}
