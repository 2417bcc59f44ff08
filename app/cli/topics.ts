import { createAppRuntime, eventCatalog } from '../runtime.ts';
import { createKafka } from '../../events/kafka.ts';
import { ensureTopics } from '../../events/topics.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { UsageError } from './exit.ts';
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
