import type { Request } from 'express';
import type { Db } from 'mongodb';
import type { AccountRecord, AccountStore } from '../accounts/account-store.ts';
import { authenticate } from '../accounts/session.ts';
import type { TokenSettings } from '../accounts/tokens.ts';
import { ownedBy } from '../keys/key-owner.ts';
import { getKeyBySubscription, type KeyRecord } from '../keys/keys.projection.ts';
import { HttpError } from '../platform/http/errors.ts';
import { findTeam } from './workspaces.projection.ts';
import { workspaceOf, type Workspace } from './workspace.ts';

export type WorkspaceRole = 'owner' | 'admin' | 'member';

export interface WorkspaceAccess {
  workspace: Workspace;
  /** The subscription's keys record the workspace was read from (its key and members' keys). */
  record: KeyRecord;
  account: AccountRecord;
  role: WorkspaceRole;
}

export interface AccessDeps {
  db: Db;
  tokens: TokenSettings;
  accounts: Pick<AccountStore, 'findById' | 'isRevoked'>;
}

const notYours = () => new HttpError(404, 'NOT_FOUND', 'no workspace of yours has that id');

/**
 * The caller's place in a workspace, from their account token: its owner, or one of its members
 * with their role. Anyone else is told the workspace does not exist, whether or not it does.
 */
export async function workspaceAccess(req: Request, deps: AccessDeps, subscriptionId: string): Promise<WorkspaceAccess> {
  const { account } = await authenticate(req, deps.tokens, deps.accounts);
  const [record, team] = await Promise.all([getKeyBySubscription(deps.db, subscriptionId), findTeam(deps.db, subscriptionId)]);
  if (!record) throw notYours();
  const owner = ownedBy(record, account);
  const member = team?.members.find((m) => m.userId === account.userId);
  if (!owner && !member) throw notYours();
  const workspace = workspaceOf(record, team);
  // Only the owner learns why: the subscription is theirs, it just is not (or no longer) on the team tier.
  if (!workspace) throw owner ? new HttpError(403, 'FORBIDDEN', 'a team workspace is part of the team tier') : notYours();
  return { workspace, record, account, role: owner ? 'owner' : (member?.role ?? 'member') };
}

/** Whether the account is a member of the subscription's workspace (one on the team tier). */
export async function isTeamMember(db: Db, record: KeyRecord, userId: string): Promise<boolean> {
  if (record.tier !== 'team') return false;
  return (await findTeam(db, record.subscriptionId))?.members.some((m) => m.userId === userId) ?? false;
}

export function requireRole(access: WorkspaceAccess, ...roles: WorkspaceRole[]): void {
  if (!roles.includes(access.role)) {
    throw new HttpError(
      403,
      'FORBIDDEN',
      `only the workspace's ${roles.join(' or ')} may do this (you are ${access.role === 'admin' ? 'an' : 'a'} ${access.role})`,
    );
  }
}
