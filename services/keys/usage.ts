import type { Db } from 'mongodb';
import { defineEvent, type EventDefinition } from '../../events/catalog.ts';
import { projectionCollection } from '../../events/collections.ts';
import type { Event } from '../../events/envelope.ts';
import { findProjected, type Projection } from '../../events/projection.ts';
import { METRICS, periodOf, type Metric } from '../kernel/tiers.ts';

export const USAGE_TOPIC = 'usage.events';

export interface UsageIncrementedData {
  keyHash: string;
  metric: Metric;
  amount: number;
  /** UTC calendar month of the use, YYYY-MM: the quota period it counts against. */
  period: string;
}
export type UsageIncremented = Event<'usage.incremented', UsageIncrementedData>;

export const USAGE_EVENTS: readonly EventDefinition[] = [
  defineEvent<UsageIncremented>({
    type: 'usage.incremented',
    topic: USAGE_TOPIC,
    schema: 'usage/usage.incremented',
    key: (d) => d.keyHash,
  }),
];

export const periodKey = (date: Date): string => date.toISOString().slice(0, 7);

let current = { period: '', from: 0, until: 0 };
/** periodKey of now, computed once per month instead of once per request. */
export function currentPeriod(now = Date.now()): string {
  if (now < current.from || now >= current.until) {
    const { start, resetDate } = periodOf(new Date(now));
    current = { period: periodKey(start), from: start.getTime(), until: resetDate.getTime() };
  }
  return current.period;
}

export type UsageCounts = Record<Metric, number>;
export const noUsage = (): UsageCounts => ({ queries: 0, filesIndexed: 0, screenshotsAnalyzed: 0 });

export interface UsageDocument extends Record<string, unknown> {
  keyHash: string;
  period: string;
  counts: UsageCounts;
}

/**
 * Usage per meter per calendar month, counted from usage.incremented. The event's keyHash is the
 * meter its key counts under (the gate's identity.keyHash): a subscription's first key, for all its
 * keys (keys.projection.ts recordForKey), so a rotation or a team member adds to one month.
 */
export const usageProjection: Projection<UsageDocument, UsageIncremented> = {
  name: 'usage',
  collection: 'usage',
  handles: ['usage.incremented'],
  documentId: (event) => usageDocumentId(event.data.keyHash, event.data.period),
  evolve(doc, event) {
    const d = event.data;
    const current = doc ?? { keyHash: d.keyHash, period: d.period, counts: noUsage() };
    return { ...current, counts: { ...current.counts, [d.metric]: current.counts[d.metric] + d.amount } };
  },
};

export async function getUsage(db: Db, keyHash: string, period: string): Promise<UsageCounts> {
  return countsOf(
    await findProjected<UsageDocument>(await projectionCollection(db, usageProjection.collection), usageDocumentId(keyHash, period)),
  );
}

export const usageDocumentId = (keyHash: string, period: string): string => `${keyHash}:${period}`;

/** Counts of a usage document, zero for metrics it has not seen. */
export function countsOf(doc: Pick<UsageDocument, 'counts'> | null): UsageCounts {
  const counts = noUsage();
  for (const m of METRICS) counts[m] = doc?.counts[m] ?? 0;
  return counts;
}
