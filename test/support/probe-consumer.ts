/**
 * A consumer process for the crash test: applies the probe counter projection until killed.
 * Env: KAFKA_BROKERS, MONGODB_URI, MONGODB_DB, SCHEMA_REGISTRY_URL, PROBE_TOPIC, PROBE_GROUP, PROBE_COLLECTION, PROBE_CHUNK.
 */
import { ConsumerRunner } from '../../events/consumer.ts';
import { createKafka } from '../../events/kafka.ts';
import { ProjectionApplier } from '../../events/projection.ts';
import { EventPublisher } from '../../events/publisher.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { connectMongo } from '../../services/platform/mongo.ts';
import { counterProjection, probeCatalog } from './probe.ts';
import { registeredCodec } from './registered-codec.ts';

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is required`);
  return v;
};

const log = createLogger('warn');
const kafka = createKafka({ brokers: env('KAFKA_BROKERS').split(','), clientId: 'probe-consumer' }, log);
// The test that starts it registered the probe's schemas (its deploy step): this process only looks them up.
const codec = await registeredCodec(probeCatalog(env('PROBE_TOPIC')), { SCHEMA_REGISTRY_URL: env('SCHEMA_REGISTRY_URL') }, false);
const mongo = await connectMongo(env('MONGODB_URI'), env('MONGODB_DB'));
const runner = new ConsumerRunner({
  kafka,
  codec,
  publisher: new EventPublisher(kafka, codec, { timeoutMs: 5000 }),
  log,
  groupId: env('PROBE_GROUP'),
  topics: [env('PROBE_TOPIC')],
  handler: new ProjectionApplier(mongo.db, counterProjection(env('PROBE_COLLECTION'))),
  chunkSize: Number(process.env.PROBE_CHUNK ?? 500),
});
await runner.start();
process.stdout.write('consuming\n');
process.once('SIGTERM', () => {
  void runner
    .stop()
    .then(() => mongo.client.close())
    .then(() => process.exit(0));
});
