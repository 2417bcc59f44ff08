import type { Document } from 'mongodb';
import { z } from 'zod';

/** GET /audit's query: filters, a page size and the cursor of the page before. Pure. */
export const auditQuery = z.object({
  subscriptionId: z.string().min(1).max(200).optional(),
  actor: z.string().min(1).max(200).optional(),
  /** An action (key.rotated), or a family of them ending in a dot (key.). */
  action: z
    .string()
    .regex(/^[a-z]+(?:\.[a-z-]*)?$/, 'action: an action such as key.rotated, or a prefix ending in a dot such as key.')
    .optional(),
  from: z.iso.datetime({ offset: true }).optional(),
  to: z.iso.datetime({ offset: true }).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(500).optional(),
});
export type AuditQuery = z.infer<typeof auditQuery>;

interface Position {
  at: Date;
  entryId: string;
}

/** The last entry of a page, opaque to the client; newest first, so the next page is older. */
export function cursorOf(entry: Position): string {
  return Buffer.from(JSON.stringify([entry.at.toISOString(), entry.entryId])).toString('base64url');
}

export function positionOf(cursor: string): Position | null {
  try {
    const [at, entryId] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof at !== 'string' || typeof entryId !== 'string' || Number.isNaN(Date.parse(at))) return null;
    return { at: new Date(at), entryId };
  } catch {
    return null;
  }
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The filter of one page: the team's entries (any of `scope`), within the tier's retention
 * (`since`), the caller's filters, and older than the cursor.
 */
export function auditFilter(scope: Document[], query: AuditQuery, since: Date, after: Position | null): Document {
  const and: Document[] = [{ $or: scope }];
  const from = query.from ? new Date(query.from) : null;
  and.push({ at: { $gte: from && from > since ? from : since, ...(query.to ? { $lte: new Date(query.to) } : {}) } });
  if (query.actor) and.push({ actor: query.actor });
  if (query.action)
    and.push(query.action.endsWith('.') ? { action: { $regex: `^${escapeRegex(query.action)}` } } : { action: query.action });
  if (after) and.push({ $or: [{ at: { $lt: after.at } }, { at: after.at, entryId: { $lt: after.entryId } }] });
  return { $and: and };
}
