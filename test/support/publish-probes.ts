/**
 * Publishes probe events the way svc does (registered schemas, registry wire format) and prints
 * each one's data as a JSON line: the producer side of the foreign-consumer test, in a process of
 * its own so that the test itself imports no svc code.
 * Env: KAFKA_BROKERS, SCHEMA_REGISTRY_URL, PROBE_TOPIC, PROBE_COUNT.
 */
import { join } from 'node:path';
import { EventCatalog } from '../../events/catalog.ts';
import { newEvent } from '../../events/envelope.ts';
import { createKafka } from '../../events/kafka.ts';
import { EventPublisher } from '../../events/publisher.ts';
import { ensureTopics } from '../../events/topics.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { probeDefinitions } from './probe.ts';
import { registeredCodec } from './registered-codec.ts';

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is required`);
  return v;
};

const topic = env('PROBE_TOPIC');
const log = createLogger('warn');
const kafka = createKafka({ brokers: env('KAFKA_BROKERS').split(','), clientId: 'publish-probes' }, log);
const admin = kafka.admin();
await admin.connect();
await ensureTopics(admin, [topic], { partitions: 1, replicationFactor: 1 });
await admin.disconnect();
const catalog = new EventCatalog(
  probeDefinitions(topic, { withReset: false }),
  join(import.meta.dirname, '..', 'fixtures', 'schemas-evolution', 'n1'),
);
const codec = await registeredCodec(catalog, { SCHEMA_REGISTRY_URL: env('SCHEMA_REGISTRY_URL') });
const publisher = new EventPublisher(kafka, codec, { timeoutMs: 10_000 });
const events = Array.from({ length: Number(env('PROBE_COUNT')) }, (_, seq) =>
  newEvent('probe.recorded', { probeId: `p${seq % 2}`, seq, note: `note ${seq}`, weight: seq, channel: 'CLI', region: 'eu' }),
);
await publisher.publishOrdered(events.filter((e) => e.data.probeId === 'p0'));
await publisher.publishOrdered(events.filter((e) => e.data.probeId === 'p1'));
await publisher.disconnect();
for (const e of events)
  process.stdout.write(
    `${JSON.stringify({ ...e.data, eventId: e.metadata.eventId, correlationId: e.metadata.correlationId, occurredAt: e.metadata.occurredAt.getTime() })}\n`,
  );
