/**
 * Events throughput: N small events produced then consumed through our events/ layer
 * (EventPublisher + ConsumerRunner, Avro via EventCodec) and through bare kafkajs, on the same
 * broker in the same run, each over its own fresh topic and consumer group.
 *
 *   npm run bench:events
 *   BENCH_EVENTS=20000 npm run bench:events
 *
 * Env:
 *   KAFKA_BROKERS      use this broker; otherwise a throwaway Kafka is started (deploy/local/stack.ts)
 *   BENCH_EVENTS       events per path (default 100000)
 *   BENCH_BATCH        messages per send call, both paths (default 1000)
 *   BENCH_CHUNK        ConsumerRunner chunkSize (default 500, its own default)
 *   BENCH_WARMUP       events per path in an untimed warm-up round on separate topics (default 5000, 0 = none)
 *   BENCH_BARE_HEADERS 1 (default): bare messages carry the same five headers as ours, so both send
 *                      byte-identical records; 0: bare sends key + Avro value only
 *   BENCH_TIMEOUT_MS   how long one consume phase may take before the bench fails (default 180000)
 *
 * Fairness: both producers are idempotent, acks -1, maxInFlightRequests 1, DefaultPartitioner,
 * the same keys, and send BENCH_BATCH messages per awaited call. The bare records are the
 * pre-encoded bytes of the very same events (encoding is part of what ours is measured for).
 * The bare consumer has ConsumerRunner's consumer settings, uses eachBatch, counts and resolves
 * offsets; ours counts in the handler. Consume time runs from connect/subscribe/run until the
 * N-th message is seen.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Kafka, logLevel, Partitioners, type Admin, type Message } from 'kafkajs';
import { startStack, type Stack } from '../deploy/local/stack.ts';
import { EventCodec } from '../events/codec.ts';
import { ConsumerRunner } from '../events/consumer.ts';
import type { Event } from '../events/envelope.ts';
import { createKafka } from '../events/kafka.ts';
import { EventPublisher } from '../events/publisher.ts';
import { ensureTopics } from '../events/topics.ts';
import { pino } from 'pino';
import type { Logger } from '../services/platform/logger.ts';
import { probeCatalog, recorded, type ProbeRecorded } from '../test/support/probe.ts';

const intEnv = (name: string, fallback: number, min = 1): number => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min}, got "${raw}"`);
  return n;
};

const N = intEnv('BENCH_EVENTS', 100_000);
const BATCH = intEnv('BENCH_BATCH', 1000);
const CHUNK = intEnv('BENCH_CHUNK', 500);
const WARMUP = intEnv('BENCH_WARMUP', 5000, 0);
const BARE_HEADERS = process.env.BENCH_BARE_HEADERS !== '0';
const CONSUME_TIMEOUT_MS = intEnv('BENCH_TIMEOUT_MS', 180_000);
/** Distinct aggregate keys: spreads the events over the 3 partitions like real traffic. */
const KEYS = 64;
const PARTITIONS = 3;

const err = (line: string) => process.stderr.write(`[bench] ${line}\n`);
/**
 * createLogger('warn')'s level, but to stderr: pino's default stdout would interleave kafkajs
 * warnings (e.g. "coordinator is loading" on a fresh broker) with the results table.
 */
const log: Logger = pino({ level: 'warn', base: { service: 'svc-bench' } }, pino.destination(2));
const runId = randomUUID().slice(0, 8);
const groupOf = (topic: string) => `${topic}.group`;

// ---------------------------------------------------------------------------------------------
// Measurement helpers

interface Measured {
  ms: number;
  cpuMs: number;
  peakRssMb: number;
}

/** Wall time, process CPU time and the highest RSS sampled (every 10 ms) while `fn` runs. */
async function measure(fn: () => Promise<void>): Promise<Measured> {
  let peak = process.memoryUsage.rss();
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 10);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  try {
    await fn();
  } finally {
    clearInterval(sampler);
  }
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  peak = Math.max(peak, process.memoryUsage.rss());
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000, peakRssMb: peak / 2 ** 20 };
}

function withTimeout<T>(what: string, p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms / 1000}s`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** A counter that resolves `done` once it reaches `target`. */
function counter(target: number) {
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));
  const state = {
    seen: 0,
    done,
    add(n: number) {
      state.seen += n;
      if (state.seen >= target) resolveDone();
    },
  };
  return state;
}

// ---------------------------------------------------------------------------------------------
// Inputs

function makeEvents(count: number): Event<'probe.recorded', ProbeRecorded>[] {
  const events: Event<'probe.recorded', ProbeRecorded>[] = new Array(count);
  for (let i = 0; i < count; i++) events[i] = recorded(`probe-${i % KEYS}`, i, `tick ${i}`);
  return events;
}

/** The bare path's records: the same bytes ours puts on the wire (headers optional). */
function bareMessages(codec: EventCodec, events: readonly Event[]): Message[] {
  return events.map((e) => {
    const m = codec.encode(e);
    return BARE_HEADERS ? { key: m.key, value: m.value, headers: m.headers } : { key: m.key, value: m.value };
  });
}

function wireBytes(m: Message): number {
  let n = (m.value as Buffer).length + Buffer.byteLength(m.key as string);
  for (const [k, v] of Object.entries(m.headers ?? {})) n += Buffer.byteLength(k) + Buffer.byteLength(v as string);
  return n;
}

// ---------------------------------------------------------------------------------------------
// The two paths

/** The same client settings createKafka uses, without our logger. */
function bareKafka(brokers: string[]): Kafka {
  return new Kafka({
    clientId: `bench-bare-${runId}`,
    brokers,
    connectionTimeout: 3000,
    requestTimeout: 10_000,
    retry: { initialRetryTime: 100, maxRetryTime: 2000, retries: 8 },
    logLevel: logLevel.WARN,
  });
}

async function produceOurs(kafka: Kafka, topic: string, events: readonly Event[]): Promise<Measured> {
  const codec = new EventCodec(probeCatalog(topic));
  const publisher = new EventPublisher(kafka, codec, { timeoutMs: 30_000 });
  await publisher.connect();
  try {
    return await measure(async () => {
      for (let i = 0; i < events.length; i += BATCH) await publisher.publish(events.slice(i, i + BATCH));
    });
  } finally {
    await publisher.disconnect();
  }
}

async function produceBare(kafka: Kafka, topic: string, messages: readonly Message[]): Promise<Measured> {
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    createPartitioner: Partitioners.DefaultPartitioner,
    retry: { initialRetryTime: 100, maxRetryTime: 1000, retries: 5 },
  });
  await producer.connect();
  try {
    return await measure(async () => {
      for (let i = 0; i < messages.length; i += BATCH) {
        await producer.send({ topic, acks: -1, messages: messages.slice(i, i + BATCH) });
      }
    });
  } finally {
    await producer.disconnect();
  }
}

interface Consumed extends Measured {
  /** From the start call until the consumer group was joined (partitions assigned). */
  joinMs: number;
}

async function consumeOurs(kafka: Kafka, topic: string, count: number): Promise<Consumed> {
  const codec = new EventCodec(probeCatalog(topic));
  const publisher = new EventPublisher(kafka, codec, { timeoutMs: 10_000 }); // dead letters only; none expected
  const seen = counter(count);
  const seqs = new Uint8Array(count);
  let duplicates = 0;
  let stray = 0;
  const runner = new ConsumerRunner({
    kafka,
    codec,
    publisher,
    log,
    groupId: groupOf(topic),
    topics: [topic],
    chunkSize: CHUNK,
    handler: {
      async handle(events) {
        for (const e of events) {
          const seq = (e.data as ProbeRecorded).seq;
          if (seq < 0 || seq >= count) stray++;
          else if (seqs[seq] === 1) duplicates++;
          else seqs[seq] = 1;
        }
        seen.add(events.length);
      },
    },
  });
  let t0 = 0;
  let joinMs = NaN;
  runner.on(runner.events.GROUP_JOIN, () => (joinMs = performance.now() - t0));
  try {
    const m = await measure(async () => {
      t0 = performance.now();
      await runner.start();
      await withTimeout(`our consumer (${seen.seen}/${count} seen so far)`, seen.done, CONSUME_TIMEOUT_MS);
    });
    if (stray || duplicates || seen.seen !== count) {
      throw new Error(`our consumer saw ${seen.seen} events for ${count} produced (${duplicates} duplicates, ${stray} foreign)`);
    }
    return { ...m, joinMs };
  } finally {
    await runner.stop();
    await publisher.disconnect().catch(() => undefined);
  }
}

async function consumeBare(kafka: Kafka, topic: string, count: number): Promise<Consumed> {
  const consumer = kafka.consumer({
    groupId: groupOf(topic),
    allowAutoTopicCreation: false,
    sessionTimeout: 30_000,
    heartbeatInterval: 3000,
    maxWaitTimeInMs: 250,
    retry: { initialRetryTime: 200, maxRetryTime: 5000, retries: Number.MAX_SAFE_INTEGER },
  });
  const seen = counter(count);
  let t0 = 0;
  let joinMs = NaN;
  consumer.on(consumer.events.GROUP_JOIN, () => (joinMs = performance.now() - t0));
  try {
    const m = await measure(async () => {
      t0 = performance.now();
      await consumer.connect();
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      await consumer.run({
        autoCommit: true,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: 1,
        eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
          const n = batch.messages.length;
          if (n === 0) return;
          resolveOffset(batch.messages[n - 1]!.offset);
          seen.add(n);
          await heartbeat();
        },
      });
      await withTimeout(`bare consumer (${seen.seen}/${count} seen so far)`, seen.done, CONSUME_TIMEOUT_MS);
    });
    if (seen.seen !== count) throw new Error(`bare consumer saw ${seen.seen} messages for ${count} produced`);
    return { ...m, joinMs };
  } finally {
    await consumer.disconnect();
  }
}

// ---------------------------------------------------------------------------------------------
// One round: both paths, produce then consume, on fresh topics

interface Round {
  ours: { produce: Measured; consume: Consumed };
  bare: { produce: Measured; consume: Consumed };
  bytesPerMessage: { ours: number; bare: number };
}

async function round(label: string, ourKafka: Kafka, bare: Kafka, admin: Admin, count: number, created: string[]): Promise<Round> {
  const oursTopic = `bench.${label}.ours.${runId}`;
  const bareTopic = `bench.${label}.bare.${runId}`;
  // Same topic settings for both (ensureTopics also makes the .dlq twins).
  created.push(...(await ensureTopics(admin, [oursTopic, bareTopic], { partitions: PARTITIONS, replicationFactor: 1 })));

  const events = makeEvents(count);
  const codec = new EventCodec(probeCatalog(bareTopic));
  const messages = bareMessages(codec, events);
  const first = new EventCodec(probeCatalog(oursTopic)).encode(events[0]!);
  const oursBytes = wireBytes({ key: first.key, value: first.value, headers: first.headers });
  const ours = { produce: await produceOurs(ourKafka, oursTopic, events), consume: undefined as unknown as Consumed };
  const bareR = { produce: await produceBare(bare, bareTopic, messages), consume: undefined as unknown as Consumed };
  ours.consume = await consumeOurs(ourKafka, oursTopic, count);
  bareR.consume = await consumeBare(bare, bareTopic, count);
  return {
    ours,
    bare: bareR,
    bytesPerMessage: { ours: oursBytes, bare: wireBytes(messages[0]!) },
  };
}

// ---------------------------------------------------------------------------------------------
// Report

const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');
const rate = (count: number, ms: number) => (count / ms) * 1000;

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const sep = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(rows[0]!), sep, ...rows.slice(1).map(line)].join('\n');
}

function report(r: Round, count: number, brokers: string, ownBroker: boolean, rssBaseMb: number): string {
  const row = (path: string, phase: string, m: Measured, join?: number) => [
    path,
    phase,
    fmtInt(rate(count, m.ms)),
    (m.ms / 1000).toFixed(2),
    join === undefined ? '' : Number.isNaN(join) ? '?' : (join / 1000).toFixed(2),
    fmtInt(m.cpuMs),
    ((m.cpuMs / m.ms) * 100).toFixed(0) + '%',
    fmtInt(m.peakRssMb),
  ];
  const ratio = (ours: Measured, bare: Measured) => (rate(count, ours.ms) / rate(count, bare.ms)).toFixed(2);
  const rows = [
    ['path', 'phase', 'msgs/s', 'wall s', 'join s', 'cpu ms', 'cpu', 'peak RSS MB'],
    row('ours', 'produce', r.ours.produce),
    row('bare', 'produce', r.bare.produce),
    row('ours', 'consume', r.ours.consume, r.ours.consume.joinMs),
    row('bare', 'consume', r.bare.consume, r.bare.consume.joinMs),
  ];
  const maxRssMb = process.resourceUsage().maxRSS / 1024;
  return [
    '',
    `events throughput: ${fmtInt(count)} events per path, ${BATCH} per send, ${PARTITIONS} partitions, ${KEYS} keys, chunkSize ${CHUNK}`,
    `broker ${brokers} (${ownBroker ? 'started by the bench, same host' : 'KAFKA_BROKERS'}); node ${process.version}; ` +
      `record ${r.bytesPerMessage.ours} B on the wire (ours), ${r.bytesPerMessage.bare} B (bare${BARE_HEADERS ? ', same headers' : ', no headers'})`,
    '',
    table(rows),
    '',
    `ours / bare   produce ${ratio(r.ours.produce, r.bare.produce)}x   consume ${ratio(r.ours.consume, r.bare.consume)}x`,
    `consume time includes connect, group join (column "join s") and the first fetch wait; cpu = this node process only`,
    `RSS before the timed phases ${fmtInt(rssBaseMb)} MB (inputs for both paths held in memory); process peak RSS ${fmtInt(maxRssMb)} MB`,
    '',
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Main

async function main(): Promise<void> {
  let stack: Stack | undefined;
  let dataDir: string | undefined;
  const cleanupStack = async () => {
    const s = stack;
    stack = undefined;
    await s?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    dataDir = undefined;
  };
  const onSignal = (signal: NodeJS.Signals) => {
    err(`${signal}: stopping`);
    void cleanupStack().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const created: string[] = [];
  let admin: Admin | undefined;
  try {
    let brokers = process.env.KAFKA_BROKERS;
    if (!brokers) {
      const base = resolve('.data');
      mkdirSync(base, { recursive: true });
      dataDir = mkdtempSync(join(base, 'bench-'));
      err(`starting Kafka under ${dataDir} (KAFKA_BROKERS not set)`);
      stack = await startStack({
        dataDir,
        ports: 'auto',
        existing: { MONGODB_URI: 'unused', SMTP_URL: 'unused', MAILPIT_URL: '' },
        progress: (l) => err(l),
      });
      brokers = stack.env.KAFKA_BROKERS;
    }
    const brokerList = brokers.split(',').map((b) => b.trim()).filter(Boolean);
    const ourKafka = createKafka({ brokers: brokerList, clientId: `bench-ours-${runId}` }, log);
    const bare = bareKafka(brokerList);
    admin = ourKafka.admin();
    await admin.connect();

    if (WARMUP > 0) {
      err(`warm-up: ${fmtInt(WARMUP)} events per path (untimed)`);
      await round('warmup', ourKafka, bare, admin, WARMUP, created);
    }
    const rssBaseMb = process.memoryUsage.rss() / 2 ** 20;
    err(`measuring: ${fmtInt(N)} events per path`);
    const result = await round('run', ourKafka, bare, admin, N, created);
    process.stdout.write(report(result, N, brokerList.join(','), stack !== undefined, rssBaseMb) + '\n');
  } finally {
    if (admin) {
      // Leave an existing broker as we found it.
      const groups = created.filter((t) => !t.endsWith('.dlq')).map(groupOf);
      await admin.deleteGroups(groups).catch(() => undefined);
      await admin.deleteTopics({ topics: created }).catch((e: unknown) => err(`could not delete bench topics: ${(e as Error).message}`));
      await admin.disconnect().catch(() => undefined);
    }
    await cleanupStack();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

try {
  await main();
} catch (e) {
  err(`FAILED: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  process.exitCode = 1;
}
// kafkajs may leave timers behind after disconnecting; do not hang on them.
process.exit();
