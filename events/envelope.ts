import { createHash, randomUUID } from 'node:crypto';

/** The fields every event record starts with (docs/architecture.md, Events and schemas). */
export interface EventMetadata {
  eventId: string;
  occurredAt: Date;
  correlationId: string;
  causationId: string | null;
}

export interface Event<T extends string = string, D = unknown> {
  type: T;
  data: D;
  metadata: EventMetadata;
}

/** Where an event sits in the log; projections guard their updates on it. */
export interface Position {
  topic: string;
  partition: number;
  offset: string;
}

/** A topic-partition as a map key. */
export const partitionKey = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

export type DeliveredEvent<E extends Event = Event> = E & { position: Position };

/**
 * Narrows a decoded event to the type its `type` names. The one place where a decoded event (data
 * unknown) becomes a typed one; sound because the codec decoded it with that type's own schema.
 */
export function isEventOf<E extends Event>(event: Event, ...types: readonly E['type'][]): event is E {
  return (types as readonly string[]).includes(event.type);
}

export const ENVELOPE_FIELDS = ['eventId', 'occurredAt', 'correlationId', 'causationId'] as const;

export interface Causation {
  correlationId?: string;
  /** The event or request that caused this one; its correlation id is inherited when given an event. */
  causedBy?: Pick<EventMetadata, 'eventId' | 'correlationId'>;
  occurredAt?: Date;
  eventId?: string;
}

export function newEvent<T extends string, D>(type: T, data: D, cause: Causation = {}): Event<T, D> {
  return { type, data, metadata: eventMetadata(cause) };
}

/** The envelope of a new event: its id (new, or the one given), when, and what caused it. */
export function eventMetadata(cause: Causation = {}): EventMetadata {
  const eventId = cause.eventId ?? randomUUID();
  return {
    eventId,
    occurredAt: cause.occurredAt ?? new Date(),
    correlationId: cause.causedBy?.correlationId ?? cause.correlationId ?? eventId,
    causationId: cause.causedBy?.eventId ?? null,
  };
}

/**
 * A UUID derived from a seed (RFC 9562 version 8): an event decided again after a crash gets the
 * same id it got the first time, so consumers recognise the second copy.
 */
export function derivedEventId(seed: string): string {
  const b = createHash('sha256').update(seed).digest().subarray(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x80;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
