import type { Db } from 'mongodb';
import { projectedFields } from '../../events/projection.ts';
import type { UsageAnswer } from './keys-answers.ts';
import { findStoredKey, type KeyRecord } from './keys.projection.ts';

const iso = (d: Date | null | undefined) => (d ? new Date(d).toISOString() : null);

/**
 * What GET /usage says of the key itself: its last four and dates, for the key's owner (the console's
 * keys page). The replaced key of a rotation, still in its grace period, is told apart: its creation
 * is not on record, and it stops when its grace ends.
 */
export async function keyFactsOf(db: Db, keyHash: string): Promise<UsageAnswer['key'] | undefined> {
  const record = projectedFields<KeyRecord>(await findStoredKey(db, keyHash));
  if (!record) return undefined;
  if (record.keyHash === keyHash) {
    return { last4: record.last4, createdAt: iso(record.createdAt), expiresAt: iso(record.expiresAt) };
  }
  const member = record.members?.find((m) => m.keyHash === keyHash);
  // A member key ends when the subscription's key does (keys.projection.ts recordForKey).
  if (member) return { last4: member.last4, createdAt: iso(member.createdAt), expiresAt: iso(record.expiresAt) };
  const previous = record.previous;
  if (previous?.keyHash !== keyHash) return undefined;
  const ends = previous.expiresAt && previous.expiresAt < previous.validUntil ? previous.expiresAt : previous.validUntil;
  return { last4: previous.last4, createdAt: null, expiresAt: iso(ends) };
}
