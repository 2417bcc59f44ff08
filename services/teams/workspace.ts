import type { Db } from 'mongodb';
import type { Tier } from '../kernel/tiers.ts';
import { ownedBy } from '../keys/key-owner.ts';
import { getKeyBySubscription, type KeyRecord } from '../keys/keys.projection.ts';
import { findTeam, type Invitation, type Member, type SsoSettings, type TeamRecord } from './workspaces.projection.ts';

/**
 * A team subscription's workspace as the routes see it: who owns it and what it grants (the
 * subscription, from the keys projection) with its members, invitations and SSO (the workspaces
 * projection). Only a subscription that grants the team tier has one.
 */
export interface Workspace {
  subscriptionId: string;
  /** The owning account, when billing linked the subscription to one; else it is matched by ownerEmail. */
  ownerUserId: string | null;
  ownerEmail: string | null;
  customerId: string | null;
  tier: Tier;
  members: Member[];
  invitations: Invitation[];
  sso: SsoSettings | null;
}

export function workspaceOf(record: KeyRecord, team: TeamRecord | null): Workspace | null {
  if (record.tier !== 'team') return null;
  return {
    subscriptionId: record.subscriptionId,
    ownerUserId: record.userId ?? null,
    ownerEmail: record.email,
    customerId: record.customerId,
    tier: record.tier,
    members: team?.members ?? [],
    invitations: team?.invitations ?? [],
    sso: team?.sso ?? null,
  };
}

/** The workspace of a subscription, or null when there is none (no such subscription, or not on the team tier). */
export async function findWorkspace(db: Db, subscriptionId: string): Promise<Workspace | null> {
  const [record, team] = await Promise.all([getKeyBySubscription(db, subscriptionId), findTeam(db, subscriptionId)]);
  return record ? workspaceOf(record, team) : null;
}

/** Whether this account owns the workspace: it owns its subscription (key-owner.ts's rule: an e-mail match needs a verified address). */
export const ownsWorkspace = (
  workspace: Pick<Workspace, 'ownerUserId' | 'ownerEmail'>,
  account: { userId: string; email: string; emailVerifiedAt?: Date | null | undefined },
): boolean => ownedBy({ userId: workspace.ownerUserId, email: workspace.ownerEmail }, account);
