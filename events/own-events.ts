import type { Db, Document } from 'mongodb';
import { appliedHere } from './applied-here.ts';
import { projectionCollection } from './collections.ts';
import type { Event } from './envelope.ts';
import { applyEvents, type Projection } from './projection.ts';
import type { EventPublisher } from './publisher.ts';

/**
 * Publishes one aggregate's new events and applies them to the writer's projection at their real
 * positions, so the writer reads its own writes at once; the projection consumer later finds them
 * applied (in this process, without reading: AppliedHere). A crash in between only delays the
 * projection until the consumer gets there.
 */
export async function publishAndApply(
  publisher: Pick<EventPublisher, 'publishOrdered'>,
  db: Db,
  projection: Projection<Document>,
  events: readonly Event[],
): Promise<void> {
  if (events.length === 0) return;
  // The projection's consumer in this process waits for this write instead of racing it (AppliedHere).
  const applied = appliedHere.applying(projection.collection, events);
  try {
    const positions = await publisher.publishOrdered(events);
    const delivered = events.map((e, i) => ({ ...e, position: positions[i]! }));
    await applyEvents(await projectionCollection(db, projection.collection), projection, delivered);
  } finally {
    applied();
  }
}
