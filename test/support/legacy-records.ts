import type { EventCatalog, SchemaVersion } from '../../events/catalog.ts';
import { HEADER } from '../../events/codec.ts';
import type { Event } from '../../events/envelope.ts';

/**
 * A record as svc wrote them before the schema registry (raw Avro, the schema's SHA-256 in a
 * header): what the topics hold from then, which readers must still accept.
 */
export function legacyRecord(
  catalog: EventCatalog,
  event: Event,
  version: SchemaVersion = catalog.current(event.type),
): { topic: string; key: string; value: Buffer; headers: Record<string, string> } {
  const definition = catalog.definition(event.type);
  const record = { ...event.metadata, ...(event.data as Record<string, unknown>) };
  return {
    topic: definition.topic,
    key: definition.key(event.data),
    value: version.avroType.toBuffer(record),
    headers: {
      [HEADER.type]: event.type,
      [HEADER.fingerprint]: version.fingerprint,
      [HEADER.eventId]: event.metadata.eventId,
      [HEADER.correlationId]: event.metadata.correlationId,
      [HEADER.contentType]: 'application/avro',
    },
  };
}
