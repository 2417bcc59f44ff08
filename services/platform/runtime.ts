import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Admin, Kafka } from 'kafkajs';
import type { EventCatalog } from '../../events/catalog.ts';
import { EventCodec } from '../../events/codec.ts';
import type { ConsumerHealth, ConsumerRunner } from '../../events/consumer.ts';
import { createKafka } from '../../events/kafka.ts';
import { reportDeadLetterDepth } from '../../events/metrics.ts';
import { EventPublisher } from '../../events/publisher.ts';
import { loadPolicy } from '../../events/schema-compatibility.ts';
import { SchemaRegistryClient } from '../../events/schema-registry.ts';
import { ensureTopics } from '../../events/topics.ts';
import type { Config } from './config.ts';
import { kafkaCheck, mongoCheck, type HealthCheck, type HealthSource } from './health.ts';
import type { Logger } from './logger.ts';
import { connectMongo, type MongoHandle } from './mongo.ts';

/** The shared plumbing every service in a process uses: one Kafka client, one producer, one Mongo pool. */
export interface Runtime {
  config: Config;
  log: Logger;
  kafka: Kafka;
  admin: Admin;
  catalog: EventCatalog;
  /** The schema registry (SCHEMA_REGISTRY_*): the codec's ids and writer schemas come from it. */
  schemaRegistry: SchemaRegistryClient;
  codec: EventCodec;
  publisher: EventPublisher;
  mongo: MongoHandle;
  /** This process, as an owner of effect claims: host, pid and a random part (pids repeat across restarts). */
  instanceId: string;
  /** The dependency checks every face's readiness can use (a face may pick a subset). */
  dependencies: Record<string, HealthCheck>;
  /** Readiness and liveness of this process: its dependencies, its consumer groups, whether it is stopping. */
  health: HealthSource;
  /** Registers a consumer group whose health readiness reports. */
  track(runner: ConsumerRunner): void;
  /** From now on readiness answers 503, so load balancers stop sending work while we drain. */
  markStopping(): void;
  /** A consumer group id in this deployment's namespace (KAFKA_TOPIC_PREFIX). */
  groupId(name: string): string;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  /**
   * The event catalog of this deployment. The composition root (app/registry.ts) assembles it from
   * the contexts; the kernel does not know them.
   */
  catalog: EventCatalog;
  /** Create the catalog's topics (and their DLQs) if missing. */
  provisionTopics?: boolean;
}

/** A step of closing that may hang on a dead dependency: bounded, so shutdown always ends. */
const CLOSE_STEP_MS = 3000;

export async function createRuntime(config: Config, log: Logger, options: RuntimeOptions): Promise<Runtime> {
  const { catalog } = options;
  const schemaRegistry = new SchemaRegistryClient(config.schemaRegistry);
  // The deploy step for the local stack and the tests; production runs `svc schemas register` before the pods start.
  if (config.schemaRegistry.registerAtStart) await schemaRegistry.register(catalog, loadPolicy(catalog.schemasDir));
  const codec = new EventCodec(catalog, schemaRegistry);
  // Every id this process writes or reads of its own versions, looked up once: none on the hot path.
  await codec.warm();
  const unregistered = catalog.types().filter((t) => codec.idOf(catalog.current(t)) === undefined);
  if (unregistered.length > 0) {
    log.warn(
      { types: unregistered },
      'event types whose current schema is not registered: publishing them is refused until `svc schemas register` runs',
    );
  }
  const kafka = createKafka(config.kafka, log);
  const admin = kafka.admin();
  await admin.connect();
  const mongo = await connectMongo(config.mongo.uri, config.mongo.db);
  if (options.provisionTopics ?? true) {
    const created = await ensureTopics(admin, catalog.topics(), {
      partitions: config.kafka.partitions,
      replicationFactor: config.kafka.replicationFactor,
    });
    if (created.length > 0) log.info({ topics: created }, 'created topics');
  }
  const publisher = new EventPublisher(kafka, codec, { timeoutMs: config.kafka.publishTimeoutMs });
  // A producer that cannot connect now retries on first publish; start-up must not wait for it.
  await publisher.connect().catch((err: unknown) => log.warn({ err: String(err) }, 'producer not connected yet'));
  const consumers = new Set<ConsumerRunner>();
  const stopReportingDepth = reportDeadLetterDepth(admin, catalog.topics());
  let stopping = false;
  const dependencies = { kafka: kafkaCheck(admin), mongodb: mongoCheck(mongo.db) };
  return {
    config,
    log,
    kafka,
    admin,
    catalog,
    schemaRegistry,
    codec,
    publisher,
    mongo,
    instanceId: `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
    dependencies,
    health: {
      dependencies,
      consumers: (): ConsumerHealth[] => [...consumers].map((c) => c.health()),
      stopping: () => stopping,
    },
    track: (runner) => void consumers.add(runner),
    markStopping: () => void (stopping = true),
    groupId: (name) => config.kafka.topicPrefix + name,
    async close() {
      stopping = true;
      stopReportingDepth();
      await bounded(publisher.disconnect());
      await bounded(admin.disconnect());
      await bounded(mongo.client.close());
    },
  };
}

async function bounded(step: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([step.catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_STEP_MS)))]);
  clearTimeout(timer);
}
