import type { Document, IndexDescription } from 'mongodb';
import type { Event } from './envelope.ts';
import type { Projection } from './projection.ts';

type DataOf<E extends Event, T extends E['type']> = Extract<E, { type: T }>['data'];

/** A log projection's document: the event's data less the fields left out, and when it happened. */
export type LogRecord<D, Omit_ extends keyof D, At extends string> = Omit<D, Omit_> & { [K in At]: Date };

/**
 * An append-only log of one event type: one document per event, keyed by an id the event carries,
 * holding its data (less the fields readers must not see, such as a key's hash) and when it
 * happened. A replay or a redelivery finds the document there and leaves it (write-once: one
 * insert per event, no read), where summing into buckets would count a redelivered event twice.
 * What reports count, time and rate is read from these.
 */
export function logProjection<E extends Event, T extends E['type'], Omit_ extends keyof DataOf<E, T>, At extends string>(spec: {
  name: string;
  collection: string;
  type: T;
  /** The document's id, from the event's data (a query id, a run id). */
  id: (data: DataOf<E, T>) => string;
  /** Fields of the data not kept. */
  omit: readonly Omit_[];
  /** The field that holds when the event happened. */
  at: At;
  indexes?: readonly IndexDescription[];
}): Projection<LogRecord<DataOf<E, T>, Omit_, At> & Document, E> {
  const is = (event: E): event is Extract<E, { type: T }> => event.type === spec.type;
  return {
    name: spec.name,
    collection: spec.collection,
    handles: [spec.type],
    documentId: (event) => (is(event) ? spec.id(event.data as DataOf<E, T>) : null),
    evolve(doc, event) {
      if (!is(event) || doc) return doc;
      const kept: Record<string, unknown> = { ...(event.data as Record<string, unknown>) };
      for (const field of spec.omit) delete kept[field as string];
      return { ...kept, [spec.at]: event.metadata.occurredAt } as LogRecord<DataOf<E, T>, Omit_, At> & Document;
    },
    ...(spec.indexes ? { indexes: spec.indexes } : {}),
    writeOnce: true,
  };
}
