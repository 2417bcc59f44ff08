import type { Tier } from '../kernel/tiers.ts';

/**
 * How far back a tier reads its audit log, in days; 0: the tier has none (the spec sells the audit
 * log with team). Entries older than the longest are swept from the projection (a replay rebuilds
 * them and the next sweep removes them again).
 */
export const AUDIT_RETENTION_DAYS: Readonly<Record<Tier, number>> = Object.freeze({ free: 0, pro: 0, team: 365 });

export const LONGEST_RETENTION_DAYS = Math.max(...Object.values(AUDIT_RETENTION_DAYS));
