import { randomUUID } from 'node:crypto';
import type { Express, Request } from 'express';
import { z } from 'zod';
import { newEvent } from '../../events/envelope.ts';
import { publishAndApply } from '../../events/own-events.ts';
import type { EventPublisher } from '../../events/publisher.ts';
import { authenticate } from '../accounts/session.ts';
import { ownedBy } from '../keys/key-owner.ts';
import { getKeyBySubscription, keysOwnedBy } from '../keys/keys.projection.ts';
import type { RotationLimit } from '../keys/rotation-limit.ts';
import { HttpError, conflict } from '../platform/http/errors.ts';
import { noStore } from '../platform/http/no-store.ts';
import { parsedInput } from '../platform/http/parsed-input.ts';
import { requireRole, workspaceAccess, type AccessDeps, type WorkspaceAccess } from './access.ts';
import type { TeamInvitationRevoked, TeamMemberInvited, TeamMemberRemoved, TeamMemberRoleChanged } from './events.ts';
import { MEMBER_ROLES } from './events.ts';
import { INVITATION_TOKEN, acceptable, encryptInvitationToken, invitationTokenHash, newInvitationToken } from './invitation-token.ts';
import { joinWorkspace } from './join.ts';
import { ssoDomainStatuses } from './sso-domain-status.ts';
import type { TeamAnswer, TeamsAnswer } from './team-answers.ts';
import {
  MAX_MEMBERS,
  invitationsEndingWith,
  teamByInvitationToken,
  teamsOfMember,
  workspacesProjection,
  type Invitation,
} from './workspaces.projection.ts';

export interface TeamRouteDeps extends AccessDeps {
  publisher: Pick<EventPublisher, 'publishOrdered'>;
  encryptionKey: Buffer;
  invitationTtlSeconds: number;
  /** Invitations per workspace per hour: each one e-mails someone. */
  invitations: Pick<RotationLimit, 'take'>;
}

const subscriptionId = z.string({ error: 'subscriptionId is required' }).trim().min(1, { error: 'subscriptionId is required' }).max(200);
const email = z
  .string({ error: 'email is required' })
  .trim()
  .toLowerCase()
  .pipe(z.email({ error: 'email is not a valid address' }));
const role = z.enum(MEMBER_ROLES, { error: `role must be one of ${MEMBER_ROLES.join(', ')}` });

export const inviteInput = z.object({ subscriptionId, email, role: role.default('member') });
export const acceptInput = z.object({
  token: z.string({ error: 'token is required' }).regex(INVITATION_TOKEN, { error: 'token is not an invitation token' }),
});
export const roleInput = z.object({ subscriptionId, role });
export const scopeInput = z.object({ subscriptionId });

/** The withdrawal of each invitation, by whoever ended the place it came with. */
const withdrawals = (a: WorkspaceAccess, invitations: readonly Invitation[], correlationId: string): TeamInvitationRevoked[] =>
  invitations.map((i) =>
    newEvent(
      'team.invitation-revoked',
      { subscriptionId: a.workspace.subscriptionId, invitationId: i.invitationId, revokedBy: a.account.userId },
      { correlationId },
    ),
  );

const memberNotFound = () => new HttpError(404, 'NOT_FOUND', 'no member of this workspace has that id');

/**
 * The team workspace: its members, their roles and invitations by e-mail. Every route takes the
 * caller's account token; owners and admins manage, members read. Removing someone is one event
 * (team.member-removed) that the keys projection reads too, so their key stops as it reaches the
 * validators (within a second), and any replica can answer any route.
 */
export function mountTeamRoutes(app: Express, deps: TeamRouteDeps): void {
  const { db } = deps;
  const access = (req: Request, id: string): Promise<WorkspaceAccess> => workspaceAccess(req, deps, id);

  app.get('/teams', noStore, async (req, res) => {
    const { account } = await authenticate(req, deps.tokens, deps.accounts);
    const [owned, memberOf] = await Promise.all([keysOwnedBy(db, account), teamsOfMember(db, account.userId)]);
    const workspaces: TeamsAnswer['workspaces'] = owned
      .filter((r) => r.tier === 'team' && ownedBy(r, account))
      .map((r) => ({ subscriptionId: r.subscriptionId, role: 'owner' as const }));
    for (const team of memberOf) {
      const me = team.members.find((m) => m.userId === account.userId);
      const record = await getKeyBySubscription(db, team.subscriptionId);
      if (me && record?.tier === 'team') workspaces.push({ subscriptionId: team.subscriptionId, role: me.role });
    }
    res.json({ workspaces } satisfies TeamsAnswer);
  });

  app.get('/team', noStore, async (req, res) => {
    const { subscriptionId: id } = parsedInput(scopeInput, req.query);
    const a = await access(req, id);
    const keyOf = (userId: string) => a.record.members?.find((k) => k.userId === userId) ?? null;
    const managing = a.role !== 'member';
    const now = Date.now();
    res.json({
      subscriptionId: id,
      role: a.role,
      owner: { userId: a.workspace.ownerUserId, email: a.workspace.ownerEmail },
      members: a.workspace.members.map((m) => {
        const key = keyOf(m.userId);
        return {
          userId: m.userId,
          email: m.email,
          role: m.role,
          via: m.via,
          joinedAt: new Date(m.joinedAt).toISOString(),
          key: key ? { last4: key.last4, createdAt: new Date(key.createdAt).toISOString() } : null,
        };
      }),
      // Who is invited is the managers' business; a member sees the team, not the guest list.
      invitations: managing
        ? a.workspace.invitations
            .filter((i) => acceptable(i, now) === 'ok')
            .map((i) => ({
              invitationId: i.invitationId,
              email: i.email,
              role: i.role,
              invitedAt: new Date(i.invitedAt).toISOString(),
              expiresAt: new Date(i.expiresAt).toISOString(),
            }))
        : [],
      // Which single sign-on domains are proven is the managers' business too (GET /team/sso has the rest).
      ssoDomains: managing && a.workspace.sso ? ssoDomainStatuses(a.workspace.sso, now) : [],
      limits: { members: MAX_MEMBERS },
    } satisfies TeamAnswer);
  });

  app.post('/team/invitations', noStore, async (req, res) => {
    const input = parsedInput(inviteInput, req.body);
    const a = await access(req, input.subscriptionId);
    requireRole(a, 'owner', 'admin');
    if (input.role === 'admin' && a.role !== 'owner') throw new HttpError(403, 'FORBIDDEN', 'only the owner may invite an admin');
    if (a.workspace.ownerEmail?.toLowerCase() === input.email || a.workspace.members.some((m) => m.email === input.email)) {
      throw conflict('that address is already in this workspace');
    }
    const now = Date.now();
    const pending = a.workspace.invitations.filter((i) => acceptable(i, now) === 'ok' && i.email !== input.email).length;
    if (a.workspace.members.length + pending >= MAX_MEMBERS)
      throw conflict(`a workspace has at most ${MAX_MEMBERS} members, invitations included`);
    const slot = await deps.invitations.take(`invite:${input.subscriptionId}`);
    if (!slot.allowed) {
      res.set('Retry-After', String(Math.ceil(slot.retryAfterMs / 1000)));
      throw new HttpError(429, 'RATE_LIMITED', 'too many invitations from this workspace this hour; retry later');
    }
    const token = newInvitationToken();
    const event: TeamMemberInvited = newEvent(
      'team.member-invited',
      {
        subscriptionId: input.subscriptionId,
        invitationId: randomUUID(),
        email: input.email,
        role: input.role,
        tokenHash: invitationTokenHash(token),
        encryptedToken: encryptInvitationToken(token, deps.encryptionKey, input.subscriptionId),
        expiresAt: new Date(now + deps.invitationTtlSeconds * 1000),
        invitedBy: a.account.userId,
      },
      { correlationId: req.id },
    );
    await publishAndApply(deps.publisher, db, workspacesProjection, [event]);
    res.status(201).json({
      invitationId: event.data.invitationId,
      email: event.data.email,
      role: event.data.role,
      expiresAt: event.data.expiresAt.toISOString(),
    });
  });

  app.delete('/team/invitations/:invitationId', noStore, async (req, res) => {
    const { subscriptionId: id } = parsedInput(scopeInput, req.query);
    const a = await access(req, id);
    requireRole(a, 'owner', 'admin');
    const invitation = a.workspace.invitations.find((i) => i.invitationId === req.params.invitationId && i.status === 'pending');
    if (!invitation) throw new HttpError(404, 'NOT_FOUND', 'no pending invitation of this workspace has that id');
    const event: TeamInvitationRevoked = newEvent(
      'team.invitation-revoked',
      { subscriptionId: id, invitationId: invitation.invitationId, revokedBy: a.account.userId },
      { correlationId: req.id },
    );
    await publishAndApply(deps.publisher, db, workspacesProjection, [event]);
    res.status(204).end();
  });

  app.post('/team/invitations/accept', noStore, async (req, res) => {
    const { token } = parsedInput(acceptInput, req.body);
    const { account } = await authenticate(req, deps.tokens, deps.accounts);
    const tokenHash = invitationTokenHash(token);
    const team = await teamByInvitationToken(db, tokenHash);
    const invitation = team?.invitations.find((i) => i.tokenHash === tokenHash);
    // One answer for an unknown token and for someone else's: the link proves the mailbox, the
    // account must be that mailbox's.
    if (!team || !invitation || invitation.email !== account.email.trim().toLowerCase()) {
      throw new HttpError(404, 'NOT_FOUND', 'no invitation for this account has that token');
    }
    const state = acceptable(invitation);
    if (state === 'expired') throw new HttpError(410, 'EXPIRED', 'this invitation has expired; ask for a new one');
    const existing = team.members.find((m) => m.userId === account.userId);
    if (state === 'used' && !existing) throw new HttpError(410, 'USED', 'this invitation was used or withdrawn; ask for a new one');
    const record = await getKeyBySubscription(db, team.subscriptionId);
    if (record?.tier !== 'team') throw new HttpError(410, 'GONE', 'this workspace is no longer on the team tier');
    const member =
      existing ??
      (await joinWorkspace(
        deps,
        {
          subscriptionId: team.subscriptionId,
          userId: account.userId,
          email: invitation.email,
          role: invitation.role,
          via: 'invitation',
          invitationId: invitation.invitationId,
        },
        { correlationId: req.id },
      ));
    if (!member) throw conflict('the invitation was used, withdrawn or the workspace is full; ask for a new one');
    res.json({ subscriptionId: team.subscriptionId, role: member.role, joinedAt: new Date(member.joinedAt).toISOString() });
  });

  app.put('/team/members/:userId/role', noStore, async (req, res) => {
    const input = parsedInput(roleInput, req.body);
    const a = await access(req, input.subscriptionId);
    requireRole(a, 'owner');
    const member = a.workspace.members.find((m) => m.userId === req.params.userId);
    if (!member) throw memberNotFound();
    if (member.role !== input.role) {
      const event: TeamMemberRoleChanged = newEvent(
        'team.member-role-changed',
        {
          subscriptionId: input.subscriptionId,
          membershipId: member.membershipId,
          userId: member.userId,
          role: input.role,
          changedBy: a.account.userId,
        },
        { correlationId: req.id },
      );
      // A demoted admin's invitations are withdrawn by the projection; each withdrawal is recorded too.
      const withdrawn =
        input.role === 'member' ? withdrawals(a, invitationsEndingWith(a.workspace.invitations, member, 'admin-role'), req.id) : [];
      await publishAndApply(deps.publisher, db, workspacesProjection, [event, ...withdrawn]);
    }
    res.json({ userId: member.userId, role: input.role });
  });

  app.delete('/team/members/:userId', noStore, async (req, res) => {
    const { subscriptionId: id } = parsedInput(scopeInput, req.query);
    const a = await access(req, id);
    const member = a.workspace.members.find((m) => m.userId === req.params.userId);
    const leaving = member?.userId === a.account.userId;
    // Anyone may leave; admins remove members; only the owner removes an admin. The owner is not a member.
    if (!leaving) {
      requireRole(a, 'owner', 'admin');
      if (!member) throw memberNotFound();
      if (member.role === 'admin' && a.role !== 'owner') throw new HttpError(403, 'FORBIDDEN', 'only the owner may remove an admin');
    }
    if (!member) throw memberNotFound();
    const event: TeamMemberRemoved = newEvent(
      'team.member-removed',
      { subscriptionId: id, membershipId: member.membershipId, userId: member.userId, removedBy: a.account.userId },
      { correlationId: req.id },
    );
    // The projection withdraws every pending invitation to them or from them as the removal arrives
    // (one it has not seen yet too); these events, after the removal, put each one in the audit log.
    const withdrawn = withdrawals(a, invitationsEndingWith(a.workspace.invitations, member, 'membership'), req.id);
    await publishAndApply(deps.publisher, db, workspacesProjection, [event, ...withdrawn]);
    res.status(204).end();
  });
}
