/**
 * Replay: `svc replay usage` (events/replay.ts replayProjection, the code the CLI runs) rebuilding
 * the platform's usage projection from N usage.incremented events, against raw consume: bare
 * kafkajs reading the very same topic's bytes from offset 0, on the same broker, in the same run.
 *
 *   npm run bench:replay
 *   BENCH_EVENTS=100000 npm run bench:replay
 *
 * Env:
 *   KAFKA_BROKERS, MONGODB_URI  use these servers; otherwise a throwaway Kafka and FerretDB are
 *                      started under .data/bench-* (deploy/local/stack.ts) and removed at the end.
 *                      Either way the bench writes only to its own topic (a per-run topic prefix)
 *                      and its own database, both removed at the end.
 *   BENCH_EVENTS       usage.incremented events in the log (default 1000000)
 *   BENCH_KEYS         distinct API keys the events are spread over (default 2000)
 *   BENCH_PERIODS      calendar months (1-12) the events are spread over, in log order (default 3); the
 *                      projection holds about BENCH_KEYS x BENCH_PERIODS documents
 *   BENCH_PARTITIONS   partitions of the topic (default 3, the platform's KAFKA_TOPIC_PARTITIONS)
 *   BENCH_BATCH        messages per produce request (default 2000)
 *   BENCH_TIMEOUT_MS   how long the raw consume or the replay may take before the bench fails
 *                      (default 600000)
 *   BENCH_PROFILE      a folder: write a V8 CPU profile of each timed phase there (raw-1, replay,
 *                      raw-2 .cpuprofile; open in Chrome DevTools or speedscope)
 *
 * What is timed. Raw consume: connect, join a fresh group, fetch from offset 0 until the N-th
 * message is seen, with ConsumerRunner's consumer settings and eachBatch, counting and resolving
 * offsets only; it runs once before and once after the replay (the baseline is their mean, so
 * neither meets a warmer broker alone). Replay: the whole replayProjection call, as `svc replay`
 * runs it: shadow collection and indexes, join, decode, apply and write every event, swap the
 * shadow in, catch up with the live end and count the documents.
 *
 * Produce is not timed: the events are encoded with the platform's EventCodec (the bytes
 * EventPublisher sends) and sent by a plain producer several batches at a time.
 *
 * The replayed projection is checked against what was produced: every document's counts equal the
 * sums of its events, and the replay reports N messages read and N events applied. Progress bars
 * go to stderr (a line every few seconds when stderr is not a terminal); results to stdout, ending
 * with the BENCH_FIGURES line `npm run bench` reads. A missed target is reported, not an error.
 * Exit 1 on any failure.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import cliProgress from 'cli-progress';
import { Kafka, logLevel, Partitioners, type Message } from 'kafkajs';
import type { Db, Document } from 'mongodb';
import { pino } from 'pino';
import { emitFigures, type BenchFigure } from './figures.ts';
import { runMain, stopOnSignals } from './run-main.ts';
import { benchStack, type BenchStack } from './throwaway-stack.ts';
import { EventCatalog } from '../events/catalog.ts';
import { EventCodec } from '../events/codec.ts';
import { loadPolicy } from '../events/schema-compatibility.ts';
import { SchemaRegistryClient } from '../events/schema-registry.ts';
import { projectionCollection } from '../events/collections.ts';
import { createKafka, kafkaSecurityOptions, type KafkaSettings } from '../events/kafka.ts';
import { EventPublisher } from '../events/publisher.ts';
import { replayProjection, type ReplayResult } from '../events/replay.ts';
import { ensureTopics } from '../events/topics.ts';
import { usageDocumentId, usageProjection, USAGE_TOPIC, type UsageIncremented } from '../services/keys/usage.ts';
import { METRICS, type Metric } from '../services/kernel/tiers.ts';
import { loadConfig } from '../services/platform/config.ts';
import type { Logger } from '../services/platform/logger.ts';
import { connectMongo, type MongoHandle } from '../services/platform/mongo.ts';
import { EVENT_DEFINITIONS } from '../app/registry.ts';
import { countFromStart, runnerLikeConsumer } from './bare-consume.ts';
import { withTimeout } from './with-timeout.ts';
import { intEnv } from './bench-env.ts';

const N = intEnv('BENCH_EVENTS', 1_000_000);
const KEYS = intEnv('BENCH_KEYS', 2000);
const PERIODS = intEnv('BENCH_PERIODS', 3);
if (PERIODS > 12) throw new Error(`BENCH_PERIODS must be at most 12 (months of one year), got ${PERIODS}`);
const PARTITIONS = intEnv('BENCH_PARTITIONS', 3);
const BATCH = intEnv('BENCH_BATCH', 2000);
const TIMEOUT_MS = intEnv('BENCH_TIMEOUT_MS', 600_000);
const PROFILE_DIR = process.env.BENCH_PROFILE || undefined;
/** Produce requests in flight at once. */
const SENDS_IN_FLIGHT = 4;
/** The issue's targets. */
const TARGET_RATIO = 0.5;
const TARGET_EVENTS = 1_000_000;
const TARGET_SECONDS = 60;

const err = (line: string) => process.stderr.write(`[bench] ${line}\n`);
/** Warnings and errors only, to stderr: stdout carries the results. */
const log: Logger = pino({ level: 'warn', base: { service: 'svc-bench' } }, pino.destination(2));
const runId = randomUUID().slice(0, 8);
const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');

// ---------------------------------------------------------------------------------------------
// Progress

function progressBar(label: string, total: number): { update(done: number): void; stop(): void } {
  const started = performance.now();
  const bar = new cliProgress.SingleBar(
    {
      format: ` ${label.padEnd(8)} [{bar}] {percentage}% | {value}/{total} events | {rate}/s`,
      hideCursor: true,
      stream: process.stderr,
      // Piped (npm run bench, CI): a line every few seconds instead of nothing.
      noTTYOutput: !process.stderr.isTTY,
      notTTYSchedule: 3000,
      formatValue: (v, _options, type) => (type === 'value' || type === 'total' ? fmtInt(v) : String(v)),
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, { rate: 0 });
  let stopped = false;
  return {
    update(done) {
      const rate = done / Math.max(0.001, (performance.now() - started) / 1000);
      bar.update(done, { rate: fmtInt(rate) });
    },
    stop() {
      if (!stopped) bar.stop();
      stopped = true;
    },
  };
}

/** Runs fn under the V8 CPU profiler when BENCH_PROFILE names a folder. */
async function profiled<T>(name: string, fn: () => Promise<T>): Promise<T> {
  if (!PROFILE_DIR) return fn();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  try {
    return await fn();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    mkdirSync(PROFILE_DIR, { recursive: true });
    const file = join(PROFILE_DIR, `${name}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
    err(`CPU profile: ${file}`);
  }
}

// ---------------------------------------------------------------------------------------------
// The events: N usage.incremented over KEYS keys and PERIODS months, in log order

/** SHA-256 hex, as the platform stores keys. */
const KEY_HASHES = Array.from({ length: KEYS }, (_, k) => createHash('sha256').update(`bench-key-${k}`).digest('hex'));
/** Months in log order, as usage accrues: the first third of the events in the first month, and so on. */
const periodOf = (i: number) => `2025-${String(Math.min(PERIODS - 1, Math.floor((i * PERIODS) / N)) + 1).padStart(2, '0')}`;

/** The i-th event; deterministic but for its id, so the expected sums need no storage of the events. */
function usageEvent(i: number): UsageIncremented {
  const metric = METRICS[i % 7 === 0 ? 1 : i % 11 === 0 ? 2 : 0]!;
  const eventId = randomUUID();
  return {
    type: 'usage.incremented',
    data: { keyHash: KEY_HASHES[(i * 7919) % KEYS]!, metric, amount: 1 + (i % 3), period: periodOf(i) },
    metadata: { eventId, occurredAt: new Date(1_735_689_600_000 + i), correlationId: eventId, causationId: null },
  };
}

type Expected = Map<string, Record<Metric, number>>;

/** Encodes with the platform's codec and sends SENDS_IN_FLIGHT batches at a time; returns the expected documents. */
async function produce(kafka: Kafka, codec: EventCodec): Promise<{ expected: Expected; bytes: number; ms: number }> {
  const producer = kafka.producer({
    allowAutoTopicCreation: false,
    idempotent: false,
    maxInFlightRequests: SENDS_IN_FLIGHT,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();
  const expected: Expected = new Map();
  // Where the platform's producer (DefaultPartitioner) puts each key, worked out once per key
  // rather than hashed again for every message.
  const partitioner = Partitioners.DefaultPartitioner();
  const partitionMetadata = Array.from({ length: PARTITIONS }, (_, partitionId) => ({
    partitionId,
    leader: 0,
    replicas: [0],
    isr: [0],
    offlineReplicas: [],
    partitionErrorCode: 0,
  }));
  const partitionOfKey = new Map<string, number>();
  const partitionOf = (topic: string, key: string) => {
    let p = partitionOfKey.get(key);
    if (p === undefined) partitionOfKey.set(key, (p = partitioner({ topic, partitionMetadata, message: { key, value: null } })));
    return p;
  };
  const bar = progressBar('produce', N);
  let sent = 0;
  let bytes = 0;
  const t0 = performance.now();
  try {
    const inFlight = new Set<Promise<void>>();
    for (let i = 0; i < N; i += BATCH) {
      const messages: Message[] = [];
      let topic = '';
      for (let j = i; j < Math.min(N, i + BATCH); j++) {
        const event = usageEvent(j);
        const m = codec.encode(event);
        topic = m.topic;
        if (j === 0)
          bytes = m.value.length + Buffer.byteLength(m.key) + Object.entries(m.headers).reduce((n, [k, v]) => n + k.length + v.length, 0);
        messages.push({ key: m.key, value: m.value, headers: m.headers, partition: partitionOf(m.topic, m.key) });
        const id = usageDocumentId(event.data.keyHash, event.data.period);
        const counts = expected.get(id) ?? { queries: 0, filesIndexed: 0, screenshotsAnalyzed: 0 };
        counts[event.data.metric] += event.data.amount;
        expected.set(id, counts);
      }
      const send: Promise<void> = producer.send({ topic, acks: -1, messages }).then(() => {
        inFlight.delete(send);
        sent += messages.length;
        bar.update(sent);
      });
      inFlight.add(send);
      if (inFlight.size >= SENDS_IN_FLIGHT) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
  } finally {
    bar.stop();
    await producer.disconnect();
  }
  return { expected, bytes, ms: performance.now() - t0 };
}

// ---------------------------------------------------------------------------------------------
// Raw consume: bare kafkajs with ConsumerRunner's consumer settings

function bareKafka(brokers: string[], security: Pick<KafkaSettings, 'ssl' | 'sasl'>): Kafka {
  return new Kafka({
    clientId: `bench-replay-raw-${runId}`,
    brokers,
    ...kafkaSecurityOptions(security),
    connectionTimeout: 3000,
    requestTimeout: 10_000,
    retry: { initialRetryTime: 100, maxRetryTime: 2000, retries: 8 },
    logLevel: logLevel.WARN,
  });
}

async function rawConsume(kafka: Kafka, topic: string, groupId: string, label: string): Promise<number> {
  const consumer = runnerLikeConsumer(kafka, groupId);
  let seen = 0;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));
  const bar = progressBar(label, N);
  const t0 = performance.now();
  try {
    await countFromStart(consumer, topic, (n) => {
      seen += n;
      bar.update(seen);
      if (seen >= N) resolveDone();
    });
    await withTimeout(() => `raw consume saw ${seen} of ${N} messages`, done, TIMEOUT_MS);
    const ms = performance.now() - t0;
    if (seen !== N) throw new Error(`raw consume saw ${seen} messages for ${N} produced`);
    return ms;
  } finally {
    bar.stop();
    await consumer.disconnect();
  }
}

// ---------------------------------------------------------------------------------------------
// Replay

async function replay(kafka: Kafka, codec: EventCodec, catalog: EventCatalog, db: Db): Promise<ReplayResult> {
  const publisher = new EventPublisher(kafka, codec, { timeoutMs: 10_000 }); // dead letters only; none expected
  let bar: ReturnType<typeof progressBar> | undefined;
  let phase = '';
  try {
    return await withTimeout(
      () => `the replay did not finish`,
      replayProjection({
        kafka,
        codec,
        catalog,
        publisher,
        db,
        projection: usageProjection,
        log,
        onProgress: (p) => {
          if (p.phase !== phase) {
            bar?.stop();
            bar = progressBar(p.phase === 'rebuild' ? 'replay' : 'catch-up', p.total);
            phase = p.phase;
          }
          bar!.update(p.done);
        },
      }),
      TIMEOUT_MS,
    );
  } finally {
    bar?.stop();
    await publisher.disconnect().catch(() => undefined);
  }
}

/** Every document of the rebuilt projection against the sums of the events produced. */
async function verify(db: Db, expected: Expected, result: ReplayResult): Promise<void> {
  const problems: string[] = [];
  if (result.messages !== N) problems.push(`replay read ${result.messages} messages, not ${N}`);
  if (result.applied !== N) problems.push(`replay applied ${result.applied} events, not ${N}`);
  const docs = await (await projectionCollection<Document & { counts: Record<Metric, number> }>(db, usageProjection.collection))
    .find({})
    .toArray();
  if (docs.length !== expected.size) problems.push(`${docs.length} documents, expected ${expected.size}`);
  let wrong = 0;
  for (const doc of docs) {
    const want = expected.get(String(doc._id));
    if (!want || METRICS.some((m) => doc.counts[m] !== want[m])) wrong++;
  }
  if (wrong) problems.push(`${wrong} documents with counts that differ from the events' sums`);
  if (problems.length) throw new Error(`the replayed projection is wrong: ${problems.join('; ')}`);
}

// ---------------------------------------------------------------------------------------------
// Main

async function main(): Promise<void> {
  let stack: BenchStack | undefined;
  const topicPrefix = `bench.replay.${runId}.`;
  const created: string[] = [];
  const groups: string[] = [];
  let admin: ReturnType<Kafka['admin']> | undefined;
  let mongo: MongoHandle | undefined;
  /** Leaves existing servers as we found them (the replay deletes its own group), stops ours; idempotent. */
  const cleanup = async () => {
    const [m, a, s] = [mongo, admin, stack];
    mongo = admin = stack = undefined;
    await m?.db.dropDatabase().catch(() => undefined);
    await m?.client.close().catch(() => undefined);
    if (a) {
      await a.deleteGroups(groups).catch(() => undefined);
      if (created.length)
        await a.deleteTopics({ topics: created }).catch((e: unknown) => err(`could not delete the bench topics: ${(e as Error).message}`));
      await a.disconnect().catch(() => undefined);
    }
    await s?.stop();
  };
  const offSignals = stopOnSignals(cleanup, err);

  try {
    stack = await benchStack({ mongo: true }, err);
    const brokerList = stack.env.KAFKA_BROKERS.split(',')
      .map((b) => b.trim())
      .filter(Boolean);
    const { ssl, sasl } = process.env.KAFKA_BROKERS ? loadConfig().kafka : {};
    const kafka = createKafka({ brokers: brokerList, clientId: `bench-replay-${runId}`, ssl, sasl }, log);
    const raw = bareKafka(brokerList, { ssl, sasl });
    admin = kafka.admin();
    await admin.connect().catch((e: unknown) => {
      throw new Error(`cannot reach Kafka at ${brokerList.join(',')}: ${(e as Error).message}`, { cause: e });
    });
    mongo = await connectMongo(stack.env.MONGODB_URI, `bench_replay_${runId}`);

    // The platform's catalog, its topics under a per-run prefix: the real usage.events schema and key.
    const catalog = new EventCatalog(EVENT_DEFINITIONS, undefined, { topicPrefix });
    // The deploy step, untimed: the catalog's schemas registered, then a codec that looked their ids up.
    const registry = new SchemaRegistryClient({ url: stack.env.SCHEMA_REGISTRY_URL });
    await registry.register(catalog, loadPolicy(catalog.schemasDir));
    const codec = new EventCodec(catalog, registry);
    await codec.warm();
    const topic = catalog.topicOf('usage.incremented');
    if (topic !== topicPrefix + USAGE_TOPIC) throw new Error(`unexpected topic ${topic}`);
    created.push(...(await ensureTopics(admin, [topic], { partitions: PARTITIONS, replicationFactor: 1 })));

    err(
      `producing ${fmtInt(N)} usage.incremented events over ${fmtInt(KEYS)} keys and ${PERIODS} months to ${topic} (${PARTITIONS} partitions)`,
    );
    const produced = await produce(raw, codec);
    err(
      `produced in ${(produced.ms / 1000).toFixed(1)} s (${fmtInt((N / produced.ms) * 1000)} events/s), ${fmtInt(produced.expected.size)} documents expected`,
    );

    const rawMs: number[] = [];
    const rawCpuUs: number[] = [];
    const cpuOf = async <T>(fn: () => Promise<T>): Promise<[T, number]> => {
      const before = process.cpuUsage();
      const value = await fn();
      const used = process.cpuUsage(before);
      return [value, used.user + used.system];
    };
    const rawRun = async (label: string) => {
      const groupId = `bench.replay.raw.${runId}.${rawMs.length}`;
      groups.push(groupId);
      const [ms, cpuUs] = await cpuOf(() => profiled(`raw-${rawMs.length + 1}`, () => rawConsume(raw, topic, groupId, label)));
      rawMs.push(ms);
      rawCpuUs.push(cpuUs);
      err(`raw consume: ${(ms / 1000).toFixed(2)} s, ${fmtInt((N / ms) * 1000)} events/s`);
    };

    await rawRun('raw');
    const db = mongo.db;
    const [result, replayCpuUs] = await cpuOf(() => profiled('replay', () => replay(kafka, codec, catalog, db)));
    err(`replay: ${result.seconds.toFixed(2)} s, ${fmtInt(result.messages / result.seconds)} events/s`);
    await rawRun('raw');
    await verify(db, produced.expected, result);

    const rawRate = (N * rawMs.length * 1000) / rawMs.reduce((a, b) => a + b, 0);
    const replayRate = N / result.seconds;
    const ratio = replayRate / rawRate;
    const secondsFor1M = (result.seconds * TARGET_EVENTS) / N;
    const full = N >= TARGET_EVENTS;
    process.stdout.write(
      `${[
        '',
        `replay of the usage projection: ${fmtInt(N)} usage.incremented events, ${fmtInt(KEYS)} keys x ${PERIODS} months ` +
          `(${fmtInt(result.documents)} documents), ${PARTITIONS} partitions, ${produced.bytes} B per record (key+value+headers)`,
        `broker ${brokerList.join(',')}, database ${stack.note}; node ${process.version}`,
        '',
        `  raw consume (bare kafkajs, offset 0):  ${rawMs.map((ms) => `${fmtInt((N / ms) * 1000)} events/s (${(ms / 1000).toFixed(2)} s)`).join(', then ')}`,
        `  replay (replayProjection, end to end): ${fmtInt(replayRate)} events/s (${result.seconds.toFixed(2)} s; ${fmtInt(result.applied)} applied)`,
        `  replay / raw consume:                  ${ratio.toFixed(2)}x (target >= ${TARGET_RATIO}x)`,
        `  CPU of this process per event:         raw ${rawCpuUs.map((us) => (us / N).toFixed(1)).join(' and ')} µs, replay ${(replayCpuUs / N).toFixed(1)} µs ` +
          `(less noisy than wall time on a shared machine)`,
        `  ${fmtInt(TARGET_EVENTS)} events replayed in:       ${secondsFor1M.toFixed(1)} s${full ? '' : ` (extrapolated from ${fmtInt(N)})`} (target < ${TARGET_SECONDS} s)`,
        '',
      ].join('\n')}\n`,
    );
    const figures: BenchFigure[] = [
      {
        figure: 'replay events/s (usage projection)',
        ours: replayRate,
        baseline: rawRate,
        baselineName: 'raw consume (bare kafkajs)',
        unit: 'events/s',
        target: `>= ${TARGET_RATIO}x`,
        met: ratio >= TARGET_RATIO,
      },
      {
        figure: full ? `replay of ${fmtInt(N)} events` : `replay of 1M events (extrapolated from ${fmtInt(N)})`,
        ours: full ? result.seconds : secondsFor1M,
        baseline: null,
        baselineName: null,
        unit: 's',
        target: `< ${TARGET_SECONDS} s for 1M`,
        met: full ? secondsFor1M < TARGET_SECONDS : null,
      },
    ];
    emitFigures('replay', figures);
  } finally {
    await cleanup();
    offSignals();
  }
}

await runMain(main, err);
