import type { Admin, Kafka } from 'kafkajs';
import { EventCatalog } from '../../events/catalog.ts';
import { EventCodec } from '../../events/codec.ts';
import { createKafka } from '../../events/kafka.ts';
import { EventPublisher } from '../../events/publisher.ts';
import { ensureTopics } from '../../events/topics.ts';
import { EVENT_DEFINITIONS } from '../../events/definitions.ts';
import type { Config } from './config.ts';
import { kafkaCheck, mongoCheck, type HealthCheck } from './health.ts';
import type { Logger } from './logger.ts';
import { connectMongo, type MongoHandle } from './mongo.ts';

/** The shared plumbing every service in a process uses: one Kafka client, one producer, one Mongo pool. */
export interface Runtime {
  config: Config;
  log: Logger;
  kafka: Kafka;
  admin: Admin;
  catalog: EventCatalog;
  codec: EventCodec;
  publisher: EventPublisher;
  mongo: MongoHandle;
  health: Record<string, HealthCheck>;
  /** A consumer group id in this deployment's namespace (KAFKA_TOPIC_PREFIX). */
  groupId(name: string): string;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  catalog?: EventCatalog;
  /** Create the catalog's topics (and their DLQs) if missing. */
  provisionTopics?: boolean;
}

export async function createRuntime(config: Config, log: Logger, options: RuntimeOptions = {}): Promise<Runtime> {
  const catalog = options.catalog ?? new EventCatalog(EVENT_DEFINITIONS, undefined, { topicPrefix: config.kafka.topicPrefix });
  const codec = new EventCodec(catalog);
  const kafka = createKafka({ brokers: config.kafka.brokers, clientId: config.kafka.clientId }, log);
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
  return {
    config,
    log,
    kafka,
    admin,
    catalog,
    codec,
    publisher,
    mongo,
    health: { kafka: kafkaCheck(admin), mongodb: mongoCheck(mongo.db) },
    groupId: (name) => config.kafka.topicPrefix + name,
    async close() {
      await publisher.disconnect().catch(() => undefined);
      await admin.disconnect().catch(() => undefined);
      await mongo.client.close().catch(() => undefined);
    },
  };
}
