import type { Db, Document } from 'mongodb';
import { appliedHere } from './applied-here.ts';
import { projectionCollection } from './collections.ts';
import type { Event } from './envelope.ts';
import { applyEvents, type Projection, type StoredDocument } from './projection.ts';
import type { EventPublisher } from './publisher.ts';

/** What a writer that read the documents already, or times its steps, passes to publishAndApply. */
export interface PublishAndApplyOptions {
  /**
   * Documents the writer read to decide (null: read and not there): the write's base, so applying
   * costs one write, not a read and a write; one changed since fails the write's guard on _v and is
   * read afresh (issue 37).
   */
  read?: ReadonlyMap<string, StoredDocument<Document> | null>;
  /** Called between the publish and the write (the benches time hops by a log line there). */
  published?: () => void;
}

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
  options: PublishAndApplyOptions = {},
): Promise<void> {
  if (events.length === 0) return;
  // The projection's consumer in this process waits for this write instead of racing it (AppliedHere).
  await appliedHere.during(projection.collection, events, async () => {
    const positions = await publisher.publishOrdered(events);
    options.published?.();
    const delivered = events.map((e, i) => ({ ...e, position: positions[i]! }));
    await applyEvents(await projectionCollection(db, projection.collection), projection, delivered, undefined, options.read);
  });
}
