import type { Request } from 'express';
import type { Db } from 'mongodb';
import { projectedFields } from '../../events/projection.ts';
import type { AccountStore } from '../accounts/account-store.ts';
import type { TokenSettings } from '../accounts/tokens.ts';
import { hasExpired } from '../keys/assess.ts';
import { KEY_PREFIX, hashKey } from '../keys/key-format.ts';
import { ownedKey } from '../keys/key-owner.ts';
import { findStoredKey, recordForKey, type KeyRecord } from '../keys/keys.projection.ts';
import { findTeam, type Member } from '../teams/workspaces.projection.ts';
import type { AuditReader } from './audit-scope.ts';

export interface AuditAccessDeps {
  db: Db;
  tokens: TokenSettings;
  accounts: Pick<AccountStore, 'findById' | 'isRevoked'>;
}

/**
 * Who reads the log, and as what. The subscription's own key reads as its owner (it is the owner's:
 * mailed to them, it rotates and limits itself). A member's own key reads as that member, with their
 * role in the workspace, while the membership lasts. An account token with ?subscriptionId= reads as
 * the subscription's owner, or as a member of its workspace with their role; anyone else is told
 * there is no such subscription (key-owner.ts).
 */
export async function auditAccess(
  req: Request,
  deps: AuditAccessDeps,
  subscriptionId: string | undefined,
): Promise<{ record: KeyRecord; reader: AuditReader }> {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.get('authorization') ?? '')?.[1];
  const apiKey = req.get('x-api-key') ?? (bearer?.startsWith(KEY_PREFIX) ? bearer : undefined);
  if (apiKey !== undefined) {
    const byMemberKey = await memberKeyReader(deps.db, hashKey(apiKey));
    if (byMemberKey) return byMemberKey;
  }
  let member: Member | undefined;
  const record = await ownedKey(
    req,
    deps,
    { subscriptionId },
    {
      alsoAdmits: async (r, account) => {
        if (r.tier !== 'team') return false;
        member = (await findTeam(deps.db, r.subscriptionId))?.members.find((m) => m.userId === account.userId);
        return member !== undefined;
      },
    },
  );
  const base = { subscriptionId: record.subscriptionId, ownerUserId: record.userId ?? null, customerId: record.customerId };
  const asMember = member as Member | undefined;
  if (asMember) {
    const key = record.members?.find((k) => k.userId === asMember.userId);
    return { record, reader: { ...base, role: asMember.role, userId: asMember.userId, memberKeyHash: key?.keyHash ?? null } };
  }
  return { record, reader: { ...base, role: 'owner', userId: record.userId ?? null, memberKeyHash: null } };
}

/** A team member's own key, working, of a member still in the workspace: the reader it is; else null. */
async function memberKeyReader(db: Db, keyHash: string): Promise<{ record: KeyRecord; reader: AuditReader } | null> {
  const record = projectedFields<KeyRecord>(await findStoredKey(db, keyHash));
  if (!record || record.keyHash === keyHash) return null;
  const view = recordForKey(record, keyHash);
  if (!view?.member || view.status !== 'active' || hasExpired(view)) return null;
  const membershipId = view.member.membershipId;
  const member = (await findTeam(db, record.subscriptionId))?.members.find((m) => m.membershipId === membershipId);
  if (!member) return null;
  return {
    record,
    reader: {
      role: member.role,
      subscriptionId: record.subscriptionId,
      ownerUserId: record.userId ?? null,
      customerId: record.customerId,
      userId: member.userId,
      memberKeyHash: keyHash,
    },
  };
}
