import type { Projection } from '../../events/projection.ts';
import { replayProjection, type ReplayResult } from '../../events/replay.ts';
import type { Runtime } from '../../services/platform/runtime.ts';

/** Rebuilds a projection from the log with a running platform's own clients, as `svc replay` does. */
export function replayWith(rt: Runtime, projection: Projection, db = rt.mongo.db): Promise<ReplayResult> {
  return replayProjection({ kafka: rt.kafka, codec: rt.codec, catalog: rt.catalog, publisher: rt.publisher, db, projection, log: rt.log });
}
