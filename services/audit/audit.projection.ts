import type { Db } from 'mongodb';
import { projectionCollection } from '../../events/collections.ts';
import type { Projection } from '../../events/projection.ts';
import { AUDITED_TYPES, auditEntryOf, entryIdOf, type AuditEntry, type AuditedEvent } from './audit-entry.ts';

/**
 * The audit log: one document per entry, written once and never changed. An event that maps to an
 * entry already there (a redelivery, or another replica's refusal of the same key in the same
 * minute) leaves it as it is, so the log is append-only by construction; no route or CLI writes it,
 * and a replay rebuilds the same entries from the same events.
 */
export const auditProjection: Projection<AuditEntry, AuditedEvent> = {
  name: 'audit-log',
  collection: 'audit_log',
  handles: AUDITED_TYPES,
  documentId: (event) => entryIdOf(event),
  evolve: (entry, event) => entry ?? auditEntryOf(event),
  writeOnce: true,
  indexes: [
    { key: { subscriptionId: 1, at: -1 }, name: 'by_subscription_time' },
    { key: { userId: 1, at: -1 }, name: 'by_user_time' },
    { key: { customerId: 1, at: -1 }, name: 'by_customer_time' },
    { key: { at: 1 }, name: 'by_time' },
  ],
};

export const auditLog = (db: Db) => projectionCollection(db, auditProjection.collection);
