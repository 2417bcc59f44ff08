import { createAppRuntime, eventCatalog } from '../runtime.ts';
import { createKafka } from '../../events/kafka.ts';
import { EventCodec } from '../../events/codec.ts';
import { RepartitionRefused, registryFormatRewrite, repartition } from '../../events/repartition.ts';
import { SchemaRegistryClient } from '../../events/schema-registry.ts';
import { ensureTopics } from '../../events/topics.ts';
import { UsageError } from './exit.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { parseFrom, TAIL_USAGE, type TailOptions, tailTopic } from './topics-tail.ts';

/** `svc topics`: create missing topics; `svc topics tail <topic>`: print a topic's records (topics-tail.ts). */
export async function topicsCommand(args: readonly string[] = [], options: TailOptions = {}): Promise<number> {
  const [action, topic, ...extra] = args;
  if (action === 'tail') {
    if (!topic || extra.length > 0) throw new UsageError(`usage: ${TAIL_USAGE}`);
    return tailCommand(topic, options);
  }
  if (action !== undefined) throw new UsageError(`unknown topics action "${action}"; usage: svc topics | ${TAIL_USAGE}`);
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  const catalog = eventCatalog(config.kafka.topicPrefix);
  const admin = createKafka(config.kafka, log).admin();
  await admin.connect();
  try {
    const created = await ensureTopics(admin, catalog.topics(), {
      partitions: config.kafka.partitions,
      replicationFactor: config.kafka.replicationFactor,
    });
    process.stdout.write(created.length > 0 ? `created: ${created.join(', ')}\n` : 'all topics exist\n');
  } finally {
    await admin.disconnect();
  }
  return 0;
}

async function tailCommand(topic: string, options: TailOptions): Promise<number> {
  parseFrom(options.from); // a usage mistake is told before any server is contacted
  const config = loadConfig();
  const log = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  const rt = await createAppRuntime(config, log, { provisionTopics: false });
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    return await tailTopic(rt, topic, options, (line) => process.stdout.write(`${line}\n`), stop.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await rt.close();
  }
}

/**
 * `svc topics repartition --to-prefix <p> --partitions <n>`: copies every event topic of this deployment
 * (KAFKA_TOPIC_PREFIX) into new topics under <p> with <n> partitions, keeping each key's events in one
 * partition in order, and makes each consumer group under <p> where it stopped (events/repartition.ts).
 * Records from before the schema registry are written in the registry format on the way (the same Avro
 * bytes under the id of the version that wrote them), so the new topics need no pre-registry reader.
 * The services must be stopped and caught up; then set KAFKA_TOPIC_PREFIX=<p> and start them.
 */
export async function repartitionCommand(options: { toPrefix?: string; partitions?: string }): Promise<number> {
  if (options.toPrefix === undefined || options.partitions === undefined)
    throw new UsageError('topics repartition needs --to-prefix <new prefix> and --partitions <n>');
  const partitions = Number(options.partitions);
  if (!Number.isInteger(partitions) || partitions < 1 || partitions > 1000) throw new UsageError('--partitions takes 1 to 1000');
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(options.toPrefix))
    throw new UsageError('--to-prefix may hold only letters, digits, ".", "_" and "-"');
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  const catalog = eventCatalog(config.kafka.topicPrefix);
  const codec = new EventCodec(catalog, new SchemaRegistryClient(config.schemaRegistry));
  await codec.warm();
  // Every version a record may have been written with must have its id before a byte is copied.
  const unregistered = catalog.types().flatMap((type) =>
    catalog
      .versions(type)
      .filter((v) => codec.idOf(v) === undefined)
      .map((v) => `"${type}" v${v.version}`),
  );
  if (unregistered.length > 0)
    throw new RepartitionRefused([`not registered in the schema registry: ${unregistered.join(', ')}; run \`svc schemas register\` first`]);
  const { rewrite, unreadable } = registryFormatRewrite(codec);
  const kafka = createKafka(config.kafka, log);
  const admin = kafka.admin();
  await admin.connect();
  try {
    const report = await repartition(
      kafka,
      admin,
      {
        topics: catalog.topics(),
        fromPrefix: config.kafka.topicPrefix,
        toPrefix: options.toPrefix,
        settings: { partitions, replicationFactor: config.kafka.replicationFactor },
        rewrite,
      },
      log,
    );
    for (const [topic, n] of Object.entries(report.copied)) {
      const rewritten = report.rewritten[topic] ?? 0;
      process.stdout.write(
        `copied ${n} event(s) to ${topic}${rewritten > 0 ? `, ${rewritten} of them from before the schema registry, now in its format` : ''}\n`,
      );
    }
    if (unreadable() > 0)
      process.stdout.write(
        `${unreadable()} record(s) named a schema fingerprint no catalog version has: copied as they were (consumers dead-letter them, as before)\n`,
      );
    process.stdout.write(`consumer groups made at the end of the new topics: ${report.groups.join(', ') || '(none)'}\n`);
    process.stdout.write(
      `now set KAFKA_TOPIC_PREFIX=${options.toPrefix} and KAFKA_TOPIC_PARTITIONS=${partitions}, and start the services\n`,
    );
  } finally {
    await admin.disconnect();
  }
  return 0;
}
