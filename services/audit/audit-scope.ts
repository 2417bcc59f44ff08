import type { Document } from 'mongodb';
import { SUBSCRIPTION_EVENT_TYPES } from '../billing/events.ts';
import type { WorkspaceRole } from '../teams/access.ts';
import type { AuditEntry } from './audit-entry.ts';

/** Who reads a team's log, and what of it is theirs to read. */
export interface AuditReader {
  role: WorkspaceRole;
  subscriptionId: string;
  /** The subscription's owning account, when billing linked it to one. */
  ownerUserId: string | null;
  customerId: string | null;
  /** The reader's account: a member's or admin's; the owner's (or null for the subscription's own key). */
  userId: string | null;
  /** A member's or admin's own key in this workspace, by hash, when they have one. */
  memberKeyHash: string | null;
}

/** The workspace's membership: who joined, left and holds which role. A member sees the team, as GET /team shows it. */
const MEMBERSHIP = ['team.member-joined', 'team.member-removed', 'team.member-role-changed'];
/** The collections' entries: a customer's collections are used by every key of that customer. */
const COLLECTIONS = ['rag.collection-configured', 'rag.collection-deleted', 'rag.index-requested'];

/**
 * What each role reads, as the query's scope (any of these), so the limit and the cursor page through
 * exactly what the reader may see. Entries naming another subscription are in no one's scope: only this
 * subscription's entries, the owner's own account's (which name none) and the customer's collections'
 * (which name none) are.
 *
 * | entries                                                      | owner | admin | member                      |
 * | ------------------------------------------------------------ | ----- | ----- | --------------------------- |
 * | the workspace: invitations, single sign-on, domain proofs    | yes   | yes   | no                          |
 * | the workspace: members joined, left, roles                   | yes   | yes   | yes, addresses left out     |
 * | the subscription's keys: its key, members' keys, refusals    | yes   | yes   | their own key only          |
 * | the subscription itself (billing)                            | yes   | no    | no                          |
 * | the collections (the customer's)                             | yes   | yes   | what they did               |
 * | the owner's own account: log-ins, passwords, log-outs        | yes   | no    | no                          |
 * | anything the reader did in this workspace                    | yes   | yes   | yes                         |
 * | the reader's own sign-ons and links through its provider     | own   | own   | yes                         |
 * | another subscription's entries                               | no    | no    | no                          |
 */
export function auditScope(r: AuditReader): Document[] {
  const ours = { subscriptionId: r.subscriptionId };
  const collections = r.customerId ? { customerId: r.customerId, subscriptionId: null, action: { $in: COLLECTIONS } } : null;
  switch (r.role) {
    case 'owner':
      return [ours, ...(r.ownerUserId ? [{ userId: r.ownerUserId, subscriptionId: null }] : []), ...(collections ? [collections] : [])];
    case 'admin':
      return [{ ...ours, action: { $nin: SUBSCRIPTION_EVENT_TYPES } }, ...(collections ? [collections] : [])];
    case 'member': {
      const me = `account:${r.userId}`;
      return [
        { ...ours, action: { $in: MEMBERSHIP } },
        ...(r.userId
          ? [
              { ...ours, actor: me },
              // A sign-on through this team, as entries recorded it before log-ins were the account's own.
              { ...ours, userId: r.userId },
              // Their own sign-ons and links through this team's provider (filed under their account, the team in details).
              {
                userId: r.userId,
                subscriptionId: null,
                action: { $in: ['account.logged-in', 'account.sso-linked', 'account.sso-unlinked'] },
                'details.team': r.subscriptionId,
              },
              { ...ours, action: 'key.issued', 'details.member': r.userId },
              ...(collections ? [{ ...collections, actor: me }] : []),
            ]
          : []),
        ...(r.memberKeyHash ? [{ ...ours, target: `key ${r.memberKeyHash.slice(0, 12)}` }] : []),
      ];
    }
  }
}

/**
 * An entry as this reader sees it: a member reads who joined by their account, not by the address
 * they were invited at (an address that left the team is no longer theirs to read).
 */
export function asReadBy(entry: AuditEntry, r: Pick<AuditReader, 'role'>): AuditEntry {
  if (r.role !== 'member' || entry.action !== 'team.member-joined') return entry;
  const { userId, role, via } = entry.details;
  return { ...entry, target: `member ${String(userId)}`, details: { userId: userId ?? null, role: role ?? null, via: via ?? null } };
}
