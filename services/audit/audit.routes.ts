import type { Express } from 'express';
import type { Db } from 'mongodb';
import type { AccountStore } from '../accounts/account-store.ts';
import type { TokenSettings } from '../accounts/tokens.ts';
import { HttpError, badRequest } from '../platform/http/errors.ts';
import { noStore } from '../platform/http/no-store.ts';
import { auditAccess } from './audit-access.ts';
import type { AuditAnswer } from './audit-answer.ts';
import type { AuditEntry } from './audit-entry.ts';
import { auditFilter, auditQuery, cursorOf, positionOf } from './audit-query.ts';
import { auditScope, asReadBy } from './audit-scope.ts';
import { auditLog } from './audit.projection.ts';
import { AUDIT_RETENTION_DAYS } from './retention.ts';

/**
 * GET /audit: a team's audit log, newest first, with filters (actor, action or a family of them,
 * from, to) and cursor paging. Read with the team's key (as its owner), a member's own key (as that
 * member), or the account token of its owner or of one of its members and ?subscriptionId=. Each role
 * reads its part of the log (audit-scope.ts), and no one reads another subscription's entries.
 * Nothing here writes: the log is the projection's alone.
 */
export function mountAuditRoute(
  app: Express,
  deps: { db: Db; tokens: TokenSettings; accounts: Pick<AccountStore, 'findById' | 'isRevoked'> },
): void {
  app.get('/audit', noStore, async (req, res) => {
    const parsed = auditQuery.safeParse(req.query);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw badRequest(issue ? `${issue.path.join('.') || 'query'}: ${issue.message}` : 'invalid query');
    }
    const query = parsed.data;
    const after = query.cursor === undefined ? null : positionOf(query.cursor);
    if (query.cursor !== undefined && after === null) throw badRequest('cursor: not a cursor this route gave');
    // Who reads decides what of the log is theirs (audit-scope.ts): the query holds only that, so a
    // page and its cursor go through exactly what this reader may see.
    const { record, reader } = await auditAccess(req, deps, query.subscriptionId);
    const retentionDays = AUDIT_RETENTION_DAYS[record.tier];
    if (retentionDays === 0) throw new HttpError(403, 'FORBIDDEN', 'the audit log is part of the team tier');
    const scope = auditScope(reader);
    const since = new Date(Date.now() - retentionDays * 86_400_000);
    const page = await (await auditLog(deps.db))
      .find(auditFilter(scope, query, since, after), { projection: { _id: 0, _v: 0, _pos: 0, _deleted: 0 } })
      .sort({ at: -1, entryId: -1 })
      .limit(query.limit + 1)
      .toArray();
    const entries = page.slice(0, query.limit) as unknown as AuditEntry[];
    const last = entries.at(-1);
    res.json({
      entries: entries.map((e) => ({ ...asReadBy(e, reader), at: new Date(e.at).toISOString() })),
      nextCursor: page.length > query.limit && last ? cursorOf(last) : null,
      retentionDays,
    } satisfies AuditAnswer);
  });
}
