import { randomUUID } from 'node:crypto';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventCatalog, defineEvent, type EventDefinition } from '../../events/catalog.ts';
import { newEvent, type Event } from '../../events/envelope.ts';
import type { Projection } from '../../events/projection.ts';

/** Test-only events and a counter projection: the backbone exercised without business words. */
const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');
export const PROBE_SCHEMAS = join(FIXTURES, 'schemas');
/** The same catalog as a writer that only knows v1 (an older producer). */
export const PROBE_SCHEMAS_V1 = join(FIXTURES, 'schemas-v1');

export interface ProbeRecorded {
  probeId: string;
  seq: number;
  note: string;
  weight?: number;
}
export interface ProbeReset {
  probeId: string;
}

export type ProbeEvent = Event<'probe.recorded', ProbeRecorded> | Event<'probe.reset', ProbeReset>;

export function probeDefinitions(topic: string, { withReset = true } = {}): EventDefinition[] {
  const defs: EventDefinition[] = [
    defineEvent<ProbeEvent>({ type: 'probe.recorded', topic, schema: 'probe/probe.recorded', key: (d) => d.probeId }),
  ];
  if (withReset) defs.push(defineEvent<ProbeEvent>({ type: 'probe.reset', topic, schema: 'probe/probe.reset', key: (d) => d.probeId }));
  return defs;
}

export const probeCatalog = (topic: string) => new EventCatalog(probeDefinitions(topic), PROBE_SCHEMAS);
export const probeCatalogV1 = (topic: string) => new EventCatalog(probeDefinitions(topic, { withReset: false }), PROBE_SCHEMAS_V1);

export const uniqueTopic = (what: string) => `test.${what}.${randomUUID().slice(0, 8)}`;

export const recorded = (probeId: string, seq: number, note = `tick ${seq}`): Event<'probe.recorded', ProbeRecorded> =>
  newEvent('probe.recorded', { probeId, seq, note });

export interface Counter extends Record<string, unknown> {
  probeId: string;
  count: number;
  total: number;
  lastSeq: number;
  seqs: number[];
}

/** Counts ticks per probe; `seqs` makes a double application visible, not just a wrong total. */
export const counterProjection = (collection: string): Projection<Counter, ProbeEvent> => ({
  name: 'probe-counter',
  collection,
  handles: ['probe.recorded', 'probe.reset'],
  documentId: (e) => e.data.probeId,
  evolve(doc, event) {
    if (event.type === 'probe.reset') return null;
    const d = event.data;
    const current = doc ?? { probeId: d.probeId, count: 0, total: 0, lastSeq: -1, seqs: [] };
    return { ...current, count: current.count + 1, total: current.total + (d.weight ?? 1), lastSeq: d.seq, seqs: [...current.seqs, d.seq] };
  },
  indexes: [{ key: { lastSeq: 1 } }],
});
