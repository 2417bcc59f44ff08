import { randomUUID } from 'node:crypto';

/** The fields every event record starts with (DESIGN.md, Events). */
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

export type DeliveredEvent<E extends Event = Event> = E & { position: Position };

export const ENVELOPE_FIELDS = ['eventId', 'occurredAt', 'correlationId', 'causationId'] as const;

export interface Causation {
  correlationId?: string;
  /** The event or request that caused this one; its correlation id is inherited when given an event. */
  causedBy?: Pick<EventMetadata, 'eventId' | 'correlationId'>;
  occurredAt?: Date;
  eventId?: string;
}

export function newEvent<T extends string, D>(type: T, data: D, cause: Causation = {}): Event<T, D> {
  const eventId = cause.eventId ?? randomUUID();
  return {
    type,
    data,
    metadata: {
      eventId,
      occurredAt: cause.occurredAt ?? new Date(),
      correlationId: cause.causedBy?.correlationId ?? cause.correlationId ?? eventId,
      causationId: cause.causedBy?.eventId ?? null,
    },
  };
}
