import { EventCatalog } from '../../../events/catalog.ts';
import { EVENT_DEFINITIONS } from '../registry.ts';
import { createKafka } from '../../../events/kafka.ts';
import { ensureTopics } from '../../../events/topics.ts';
import { loadConfig } from '../config.ts';
import { createLogger } from '../logger.ts';

export async function topicsCommand(): Promise<number> {
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  const catalog = new EventCatalog(EVENT_DEFINITIONS, undefined, { topicPrefix: config.kafka.topicPrefix });
  const admin = createKafka(config.kafka, log).admin();
  await admin.connect();
  try {
    const created = await ensureTopics(admin, catalog.topics(), { partitions: config.kafka.partitions, replicationFactor: config.kafka.replicationFactor });
    process.stdout.write(created.length > 0 ? `created: ${created.join(', ')}\n` : 'all topics exist\n');
  } finally {
    await admin.disconnect();
  }
  return 0;
}
