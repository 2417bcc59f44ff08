import cliProgress from 'cli-progress';
import { readDeadLetters, redrive, summarize } from '../../events/dead-letters.ts';
import { dlqTopic } from '../../events/topics.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { createAppRuntime } from '../runtime.ts';
import type { Runtime } from '../../services/platform/runtime.ts';

import { UsageError } from './exit.ts';

export const DLQ_USAGE = `svc dlq list                       dead-letter topics: messages, not yet re-driven
svc dlq show <topic> [--limit N]   the newest dead letters of a topic: why, from where, which event
svc dlq redrive <topic>            send a topic's dead letters back to the consumer group that failed them`;

/**
 * `svc dlq`: see what is dead-lettered, why, and send it back after a fix. <topic> is an event topic
 * or its dead-letter twin, with or without the deployment's KAFKA_TOPIC_PREFIX.
 */
export async function dlqCommand(args: readonly string[], options: { limit?: string; payload?: boolean }): Promise<number> {
  const [action, name, ...extra] = args;
  if (!action || extra.length > 0 || !['list', 'show', 'redrive'].includes(action)) throw new UsageError(`usage:\n${DLQ_USAGE}`);
  if (action !== 'list' && !name) throw new UsageError(`name a topic: svc dlq ${action} <topic>`);
  const limit = options.limit === undefined ? 20 : Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new UsageError('--limit takes a whole number from 1 to 10000');

  const config = loadConfig();
  const log = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  const rt = await createAppRuntime(config, log, { provisionTopics: false });
  try {
    const prefix = config.kafka.topicPrefix;
    const eventTopics = rt.catalog.topics();
    const resolveTopic = (given: string): string => {
      const bare = given.endsWith('.dlq') ? given.slice(0, -'.dlq'.length) : given;
      const full = bare.startsWith(prefix) ? bare : prefix + bare;
      if (!eventTopics.includes(full))
        throw new UsageError(`unknown topic "${given}"; known: ${eventTopics.map((t) => t.slice(prefix.length)).join(', ')}`);
      return dlqTopic(full);
    };
    switch (action) {
      case 'list':
        return await list(rt, eventTopics.map(dlqTopic), prefix);
      case 'show':
        return await show(rt, resolveTopic(name!), prefix, limit, options.payload ?? false);
      default:
        return await redriveTopic(rt, resolveTopic(name!), prefix, new Set(eventTopics));
    }
  } finally {
    await rt.close();
  }
}

async function list(rt: Runtime, topics: readonly string[], prefix: string): Promise<number> {
  const existing = new Set(await rt.admin.listTopics());
  const rows = [];
  for (const topic of topics) if (existing.has(topic)) rows.push(await summarize(rt.admin, topic, prefix));
  const width = Math.max(5, ...rows.map((r) => r.topic.length));
  process.stdout.write(`${'topic'.padEnd(width)}  ${'messages'.padStart(8)}  ${'pending'.padStart(8)}\n`);
  for (const r of rows)
    process.stdout.write(`${r.topic.padEnd(width)}  ${String(r.total).padStart(8)}  ${String(r.pending).padStart(8)}\n`);
  const pending = rows.reduce((sum, r) => sum + r.pending, 0);
  process.stdout.write(
    pending === 0 ? 'nothing waiting to be re-driven\n' : `${pending} dead letter(s) waiting; \`svc dlq show <topic>\` says why\n`,
  );
  return 0;
}

async function show(rt: Runtime, topic: string, prefix: string, limit: number, payload: boolean): Promise<number> {
  const letters = await readDeadLetters({ kafka: rt.kafka, admin: rt.admin, topic, groupPrefix: prefix, limit });
  if (letters.length === 0) {
    process.stdout.write(`${topic}: empty\n`);
    return 0;
  }
  for (const l of letters) {
    process.stdout.write(
      `${topic}/${l.partition}@${l.offset}  failed ${l.failedAt} in ${l.group}\n` +
        `  event    ${l.eventType ?? '(no type)'} ${l.eventId ?? ''}\n` +
        `  from     ${l.originalTopic}/${l.originalPartition}@${l.originalOffset}\n` +
        `  error    ${l.error}\n`,
    );
    if (payload) {
      let text: string;
      try {
        // The decoded event: keys travel only encrypted, so nothing secret is printed.
        await rt.codec.prepare([l.message]);
        const event = rt.codec.decode(l.message);
        text = JSON.stringify(event.data);
      } catch (err) {
        text = `(cannot decode: ${(err as Error).message})`;
      }
      process.stdout.write(`  data     ${text}\n`);
    }
  }
  return 0;
}

async function redriveTopic(rt: Runtime, topic: string, prefix: string, allowed: ReadonlySet<string>): Promise<number> {
  const before = await summarize(rt.admin, topic, prefix);
  if (before.pending === 0) {
    process.stdout.write(`${topic}: nothing to re-drive\n`);
    return 0;
  }
  const bar = new cliProgress.SingleBar(
    { format: ' re-driving [{bar}] {value}/{total}', hideCursor: true, stream: process.stderr },
    cliProgress.Presets.shades_classic,
  );
  bar.start(before.pending, 0);
  try {
    const result = await redrive({
      kafka: rt.kafka,
      admin: rt.admin,
      publisher: rt.publisher,
      topic,
      groupPrefix: prefix,
      allowedTopics: allowed,
      onProgress: (done) => bar.update(done),
    });
    bar.stop();
    const groups = Object.entries(result.byGroup)
      .map(([group, n]) => `${group} (${n})`)
      .join(', ');
    process.stdout.write(`re-drove ${result.redriven} dead letter(s) from ${topic} to: ${groups}\n`);
  } finally {
    bar.stop();
  }
  return 0;
}
