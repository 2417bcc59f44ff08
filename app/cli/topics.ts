import { eventCatalog } from '../runtime.ts';
import { createKafka } from '../../events/kafka.ts';
import { ensureTopics } from '../../events/topics.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { createLogger } from '../../services/platform/logger.ts';

export async function topicsCommand(): Promise<number> {
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
