import { expect } from 'chai';
import { newEvent } from '../../../events/envelope.ts';
import type { MemberRole, TeamEvent, TeamMemberInvitedData, TeamMemberJoinedData } from '../../../services/teams/events.ts';
import { evolveTeam, invitationsEndingWith, type TeamRecord } from '../../../services/teams/workspaces.projection.ts';

const T0 = new Date('2026-11-26T12:00:00Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const SUB = 'sub-team';

const invited = (id: string, email: string, invitedBy: string, seconds: number) =>
  newEvent(
    'team.member-invited',
    {
      subscriptionId: SUB,
      invitationId: id,
      email,
      role: 'member',
      tokenHash: `hash-${id}`,
      encryptedToken: 'x',
      expiresAt: at(seconds + 3600),
      invitedBy,
    } satisfies TeamMemberInvitedData,
    { occurredAt: at(seconds) },
  );
const joined = (membershipId: string, userId: string, invitationId: string | null, seconds: number, role: MemberRole = 'member') =>
  newEvent(
    'team.member-joined',
    {
      subscriptionId: SUB,
      membershipId,
      userId,
      email: `${userId}@example.test`,
      role,
      via: invitationId ? 'invitation' : 'sso',
      invitationId,
    } satisfies TeamMemberJoinedData,
    { occurredAt: at(seconds) },
  );
const removed = (membershipId: string, userId: string, seconds: number) =>
  newEvent('team.member-removed', { subscriptionId: SUB, membershipId, userId, removedBy: 'owner' }, { occurredAt: at(seconds) });
const roleChanged = (membershipId: string, userId: string, role: MemberRole, seconds: number) =>
  newEvent(
    'team.member-role-changed',
    { subscriptionId: SUB, membershipId, userId, role, changedBy: 'owner' },
    { occurredAt: at(seconds) },
  );

const team = (events: TeamEvent[]): TeamRecord => events.reduce<TeamRecord | null>((doc, e) => evolveTeam(doc, e), null)!;
const statuses = (t: TeamRecord) => Object.fromEntries(t.invitations.map((i) => [i.invitationId, i.status]));

describe('team workspaces: removal withdraws the invitations that came with the membership (unit)', () => {
  // Al is an admin who joined through i0 and invited his other address (i1) and someone else (i2);
  // the owner invited Zed (i3), who then joined by single sign-on; Bo's invitation (i4) is the owner's.
  const story: TeamEvent[] = [
    invited('i0', 'al@example.test', 'owner', 0),
    joined('m-al', 'al', 'i0', 1, 'admin'),
    invited('i1', 'al-alt@example.test', 'al', 2),
    invited('i2', 'cy@example.test', 'al', 3),
    invited('i3', 'zed@example.test', 'owner', 4),
    joined('m-zed', 'zed', null, 5),
    invited('i4', 'bo@example.test', 'owner', 6),
  ];

  it("a removed admin's invitations are withdrawn, and a join through one of them is refused, in a replay too", () => {
    const after = team([...story, removed('m-al', 'al', 10)]);
    expect(statuses(after)).to.deep.equal({ i0: 'accepted', i1: 'revoked', i2: 'revoked', i3: 'pending', i4: 'pending' });
    // Al's other account walking back in through i1 after the removal: refused by the projection itself.
    const walkedBack = team([...story, removed('m-al', 'al', 10), joined('m-alt', 'al-alt', 'i1', 11)]);
    expect(walkedBack.members.map((m) => m.userId)).to.deep.equal(['zed']);
    // Joined before the removal: the join stands (it was pending then); only what was pending is settled.
    const before = team([...story, joined('m-cy', 'cy', 'i2', 8), removed('m-al', 'al', 10)]);
    expect(before.members.map((m) => m.userId)).to.deep.equal(['zed', 'cy']);
    expect(statuses(before).i2).to.equal('accepted');
  });

  it("a removed member's pending invitation to their own address is withdrawn, so they cannot come back through it", () => {
    const after = team([...story, removed('m-zed', 'zed', 10)]);
    expect(statuses(after).i3).to.equal('revoked');
    expect(team([...story, removed('m-zed', 'zed', 10), joined('m-zed-2', 'zed', 'i3', 11)]).members.map((m) => m.userId)).to.deep.equal([
      'al',
    ]);
    // Leaving oneself is a removal too; others' invitations stay.
    expect(statuses(after).i4).to.equal('pending');
  });

  it('a demotion to member withdraws the invitations they sent, not those to them; a promotion withdraws nothing', () => {
    const demoted = team([...story, roleChanged('m-al', 'al', 'member', 10)]);
    expect(statuses(demoted)).to.include({ i1: 'revoked', i2: 'revoked', i3: 'pending', i4: 'pending' });
    const promoted = team([...story, roleChanged('m-zed', 'zed', 'admin', 10)]);
    expect(statuses(promoted)).to.include({ i3: 'pending', i4: 'pending' });
  });

  it('a removal of a membership that already ended, arriving again, changes nothing', () => {
    const once = team([...story, removed('m-al', 'al', 10)]);
    expect(evolveTeam(once, removed('m-al', 'al', 11))).to.deep.equal(once);
  });

  it('names what a removal or a demotion ends, for the route to record each withdrawal', () => {
    const t = team(story);
    const al = { userId: 'al', email: 'AL@example.test ' };
    expect(invitationsEndingWith(t.invitations, al, 'membership').map((i) => i.invitationId)).to.deep.equal(['i1', 'i2']);
    const zed = { userId: 'zed', email: 'zed@example.test' };
    expect(invitationsEndingWith(t.invitations, zed, 'membership').map((i) => i.invitationId)).to.deep.equal(['i3']);
    expect(invitationsEndingWith(t.invitations, zed, 'admin-role')).to.deep.equal([]);
  });
});
