/**
 * Webhook → key: how long from a signed subscription_created webhook until its API key is in the
 * customer's mailbox and answers valid at POST /validate, one webhook at a time, on a throwaway
 * stack (Kafka, FerretDB, Mailpit) with the real services in this process: the webhook ingress,
 * billing, keys (issuer, projections, /validate) and the mailer.
 *
 *   npm run bench:webhook
 *   BENCH_WEBHOOKS=50 npm run bench:webhook
 *
 * Env:
 *   KAFKA_BROKERS, MONGODB_URI   use these servers; otherwise throwaway ones are started (deploy/local/stack.ts)
 *   SMTP_URL + MAILPIT_URL       use this Mailpit (both, or neither: a throwaway one is started)
 *   BENCH_WEBHOOKS               measured webhooks (default 200), sent one at a time
 *   BENCH_BROKER_WARMUP          records sent one at a time through the broker first, read by 6 groups
 *                                (default 15000, about 25 s; 0 = none, as before 2026-11-29 evening): a throwaway
 *                                broker's JVM starts cold, and production's brokers are warm (bench/warm-broker.ts)
 *   BENCH_WARMUP                 untimed webhooks first (default 10, 0 = none): group joins, JIT, connections
 *   BENCH_TIMEOUT_MS             how long one webhook may take before the bench fails (default 30000)
 *   KAFKA_COMMIT_INTERVAL_MS     passed to the services (0: commit after every chunk, as before issue 37)
 *
 * End to end runs from sending the webhook until the key read from the e-mail in Mailpit's HTTP
 * API is answered valid by /validate. Each hop is timed from the services' own debug lines (read
 * in-process as they are written, stamped with this process's clock; nothing is parsed unless it
 * is one of them): the consumer runner's "chunk received", billing's "subscription published", the
 * issuer's "key published" and "API key issued" (keys projection applied), the mailer's "e-mail
 * sending" and "e-mail handed to SMTP". The bench looks into Mailpit as soon as the mailer hands the e-mail over (and
 * every 100 ms regardless, so a mailer without that line is measured too, 100 ms coarser).
 *
 * It also prints each process's CPU per webhook (bench/process-cpu.ts: this process and the stack's
 * Kafka, FerretDB, PostgreSQL and Mailpit, each one's idle use subtracted), a steadier figure than
 * the latency on a small shared machine.
 *
 * Results go to stdout (the per-hop table, the CPU table, then the BENCH_FIGURES line); progress to stderr.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pino } from 'pino';
import { freePort } from '../deploy/local/processes.ts';
import { startStack, type Stack, type StackEnv } from '../deploy/local/stack.ts';
import { emitFigures, percentile, type BenchFigure } from './figures.ts';
import { cpuBetween, sampleTreeCpu } from './process-cpu.ts';
import { runMain, stopOnSignals } from './run-main.ts';
import { billingService } from '../services/billing/billing.service.ts';
import { webhookIngressService } from '../services/billing/webhook-ingress.service.ts';
import { keysService } from '../services/keys/keys.service.ts';
import { mailerService } from '../services/mailer/mailer.service.ts';
import { smtpMailer } from '../services/mailer/transport.ts';
import { ensureTopics } from '../events/topics.ts';
import { startServices, type RunningPlatform } from '../app/cli/run.ts';
import { kafkaSecurityVariables } from '../services/platform/kafka-security.ts';
import { REDACTED_PATHS, type Logger } from '../services/platform/logger.ts';
import { sign, subscriptionPayload, toBody } from '../test/support/lemonsqueezy.ts';
import { intEnv } from './bench-env.ts';
import { warmBroker } from './warm-broker.ts';

const N = intEnv('BENCH_WEBHOOKS', 200);
const WARMUP = intEnv('BENCH_WARMUP', 10, 0);
const TIMEOUT_MS = intEnv('BENCH_TIMEOUT_MS', 30_000);
const BROKER_WARMUP = intEnv('BENCH_BROKER_WARMUP', 15_000, 0);
/** As many groups as read subscriptions.events in the services: each record wakes that many fetches. */
const BROKER_WARMUP_GROUPS = 6;
const SIGNING_SECRET = 'bench-signing-secret-0123456789';
const PRO_VARIANT = 301789;
// The hook on the mailer's "handed to SMTP" line wakes the look; this poll is only a backstop. At
// 10 ms its reads of Mailpit cost the stack being measured 3 ms of CPU per webhook (issue 37).
const FALLBACK_POLL_MS = 100;

const err = (line: string) => process.stderr.write(`[bench] ${line}\n`);
const runId = randomUUID().slice(0, 8);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// Timing hooks: the services' debug lines, stamped as they are written

/** The milestones of one webhook, in this process's performance.now(). */
const MILESTONES = [
  'sent',
  'answered',
  'billingReceived',
  'subscriptionPublished',
  'issuerReceived',
  'keyPublished',
  'keyApplied',
  'mailerReceived',
  'mailerSending',
  'handedToSmtp',
  'inMailpit',
  'valid',
] as const;
type Milestone = (typeof MILESTONES)[number];
type Timeline = Partial<Record<Milestone, number>>;

/** The hops of the table: from one milestone to another. */
const HOPS: { name: string; from: Milestone; to: Milestone }[] = [
  { name: 'ingress: POST → 200 (webhook in Kafka)', from: 'sent', to: 'answered' },
  { name: '→ billing consumer has it', from: 'answered', to: 'billingReceived' },
  { name: 'billing: decide, publish subscription.created', from: 'billingReceived', to: 'subscriptionPublished' },
  { name: '→ issuer consumer has it', from: 'subscriptionPublished', to: 'issuerReceived' },
  { name: 'issuer: claim, mint, publish key.generated', from: 'issuerReceived', to: 'keyPublished' },
  { name: 'issuer: keys projection applied', from: 'keyPublished', to: 'keyApplied' },
  { name: '→ mailer consumer has it', from: 'keyPublished', to: 'mailerReceived' },
  { name: 'mailer: key check + claim', from: 'mailerReceived', to: 'mailerSending' },
  { name: 'mailer: SMTP send', from: 'mailerSending', to: 'handedToSmtp' },
  { name: '→ seen in Mailpit (bench)', from: 'handedToSmtp', to: 'inMailpit' },
  { name: '/validate answers valid (bench)', from: 'inMailpit', to: 'valid' },
  { name: 'end to end', from: 'sent', to: 'valid' },
];

interface Tracker {
  /** The webhook in flight (one at a time): where the hooks write. */
  current: Timeline | undefined;
  /** Resolved when the mailer hands the current webhook's e-mail to SMTP. */
  handedOver: (() => void) | undefined;
}

/**
 * A pino destination that reads only the lines the hops need. Runs synchronously inside the
 * logging call, so the stamp is when the service logged.
 */
function hookDestination(tracker: Tracker, groups: { billing: string; issuer: string; mailer: string }, keysTopic: string) {
  return {
    write(line: string): void {
      const at = performance.now();
      const t = tracker.current;
      if (!t) return;
      if (line.includes('"msg":"chunk received"')) {
        const { group, topic } = JSON.parse(line) as { group?: string; topic?: string };
        if (group === groups.billing) t.billingReceived ??= at;
        else if (group === groups.issuer) t.issuerReceived ??= at;
        else if (group === groups.mailer && topic === keysTopic) t.mailerReceived ??= at;
      } else if (line.includes('"msg":"subscription published"') || line.includes('"msg":"subscription changed"')) {
        // "subscription changed" (after the projection too) only where the first line is missing.
        if (line.includes('"msg":"subscription published"') || t.subscriptionPublished === undefined) t.subscriptionPublished ??= at;
      } else if (line.includes('"msg":"key published"')) {
        t.keyPublished ??= at;
      } else if (line.includes('"msg":"API key issued"')) {
        t.keyApplied ??= at;
      } else if (line.includes('"msg":"e-mail sending"')) {
        t.mailerSending ??= at;
      } else if (line.includes('"msg":"e-mail handed to SMTP"')) {
        t.handedToSmtp ??= at;
        tracker.handedOver?.();
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------
// One webhook

interface Target {
  webhooksUrl: string;
  keysUrl: string;
  mailpitUrl: string;
}

async function post(url: string, body: Buffer | string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { method: 'POST', headers, body });
  return { status: res.status, text: await res.text() };
}

/**
 * The key in the e-mail to `address`, once Mailpit has it. One request: webhooks go one at a time,
 * so the e-mail, once there, is Mailpit's latest message (a search would cost a second request).
 */
async function keyInMailpit(mailpitUrl: string, address: string): Promise<string | undefined> {
  const res = await fetch(`${mailpitUrl}/api/v1/message/latest`);
  if (res.status === 404) {
    await res.arrayBuffer();
    return undefined;
  }
  if (!res.ok) throw new Error(`Mailpit answered ${res.status}`);
  const mail = (await res.json()) as { To?: { Address: string }[]; Subject: string; Text: string };
  if (!mail.To?.some((t) => t.Address === address) || !/API key/.test(mail.Subject)) return undefined;
  const key = /svc_[A-Za-z0-9]{33}/.exec(mail.Text)?.[0];
  if (!key) throw new Error(`the key e-mail to ${address} holds no key`);
  return key;
}

interface Outcome {
  timeline: Timeline;
  /** /validate did not answer valid at the first ask after the e-mail arrived. */
  notYetValid: boolean;
}

async function oneWebhook(target: Target, tracker: Tracker, timeoutMs: number): Promise<Outcome> {
  const email = `bench-${runId}-${randomUUID().slice(0, 8)}@example.test`;
  const subscriptionId = String(randomInt(10_000_000, 99_999_999));
  const payload = subscriptionPayload('subscription_created', {
    subscriptionId,
    userId: null,
    attributes: { user_email: email, variant_id: PRO_VARIANT },
  });
  const body = toBody(payload);
  const headers = { 'content-type': 'application/json', 'x-event-name': 'subscription_created', 'x-signature': sign(SIGNING_SECRET, body) };

  const timeline: Timeline = {};
  let handedOver!: () => void;
  const handed = new Promise<void>((r) => (handedOver = r));
  tracker.current = timeline;
  tracker.handedOver = handedOver;
  const deadline = Date.now() + timeoutMs;
  try {
    timeline.sent = performance.now();
    const answer = await post(`${target.webhooksUrl}/webhooks/payment`, body, headers);
    timeline.answered = performance.now();
    if (answer.status !== 200) throw new Error(`the webhook was answered ${answer.status}: ${answer.text.slice(0, 200)}`);

    // Look as soon as the mailer hands the e-mail over, and every FALLBACK_POLL_MS regardless.
    let key: string | undefined;
    let wake: () => void = () => undefined;
    void handed.then(() => wake());
    while (!key) {
      if (Date.now() > deadline) throw new Error(`no key e-mail to ${email} within ${timeoutMs} ms`);
      const waitMs = timeline.handedToSmtp === undefined ? FALLBACK_POLL_MS : 1;
      await new Promise<void>((r) => {
        const timer = setTimeout(r, waitMs);
        wake = () => (clearTimeout(timer), r());
      });
      key = await keyInMailpit(target.mailpitUrl, email);
    }
    timeline.inMailpit = performance.now();

    let notYetValid = false;
    for (;;) {
      const res = await post(`${target.keysUrl}/validate`, JSON.stringify({ apiKey: key }), { 'content-type': 'application/json' });
      if (res.status === 200 && (JSON.parse(res.text) as { valid?: boolean }).valid === true) break;
      notYetValid = true;
      if (Date.now() > deadline)
        throw new Error(`the mailed key of ${email} was not valid within ${timeoutMs} ms: ${res.status} ${res.text.slice(0, 200)}`);
      await sleep(1);
    }
    timeline.valid = performance.now();
    return { timeline, notYetValid };
  } finally {
    tracker.current = undefined;
    tracker.handedOver = undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Report

const fmt = (ms: number) => (Number.isNaN(ms) ? '–' : ms.toFixed(1));

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n');
}

function hopStats(outcomes: readonly Outcome[], from: Milestone, to: Milestone) {
  const xs = outcomes
    .map(({ timeline: t }) => (t[from] !== undefined && t[to] !== undefined ? t[to]! - t[from]! : Number.NaN))
    .filter((x) => !Number.isNaN(x))
    .sort((a, b) => a - b);
  return {
    n: xs.length,
    p50: percentile(xs, 50),
    p90: percentile(xs, 90),
    p99: percentile(xs, 99),
    max: xs.length ? xs[xs.length - 1]! : Number.NaN,
  };
}

function report(outcomes: readonly Outcome[], note: string): { text: string; p50: number; p99: number } {
  const rows = [['hop', 'n', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms']];
  for (const hop of HOPS) {
    const s = hopStats(outcomes, hop.from, hop.to);
    rows.push([hop.name, String(s.n), fmt(s.p50), fmt(s.p90), fmt(s.p99), fmt(s.max)]);
  }
  const e2e = hopStats(outcomes, 'sent', 'valid');
  const notYetValid = outcomes.filter((o) => o.notYetValid).length;
  const text = [
    '',
    `webhook → key e-mailed and valid at /validate: ${outcomes.length} signed subscription_created webhooks, one at a time (${WARMUP} warm-up)`,
    `${note}; node ${process.version}`,
    '',
    table(rows),
    '',
    'Hops follow the critical path; "issuer: keys projection applied" runs beside the mailer\'s hops. Milestones are the',
    'services\' own debug lines, stamped in this process as written; a hop is "–" when a milestone line is missing, and',
    "below 0 when the next consumer had the event before the previous step's answer reached the bench.",
    `Keys not yet valid at /validate when their e-mail was in Mailpit: ${notYetValid} of ${outcomes.length}.`,
    '',
  ].join('\n');
  return { text, p50: e2e.p50, p99: e2e.p99 };
}

// ---------------------------------------------------------------------------------------------
// The floor: the critical path's own steps, each timed alone on the same stack

const PRIMITIVE_SAMPLES = 200;

interface Primitives {
  read: number;
  write: number;
  produce: number;
  smtp: number;
}

/** p50 of `samples` sequential runs of `step`. */
async function p50Of(step: (i: number) => Promise<unknown>, samples = PRIMITIVE_SAMPLES): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    await step(i);
    xs.push(performance.now() - t0);
  }
  return percentile(
    xs.sort((a, b) => a - b),
    50,
  );
}

/**
 * What one database read and write (an `_id` look-up, an insert), one Kafka publish (idempotent,
 * acks from all replicas, as EventPublisher sends) and one SMTP hand-off cost on this stack, with
 * nothing else in flight: the bricks every hop is built of.
 */
async function measurePrimitives(platform: RunningPlatform, env: StackEnv, prefix: string): Promise<Primitives> {
  const { db } = platform.runtime.mongo;
  const probes = db.collection<{ _id: string; n: number }>(`bench_primitives_${runId}`);
  const write = await p50Of((i) => probes.insertOne({ _id: `p-${i}`, n: i }));
  const read = await p50Of((i) => probes.findOne({ _id: `p-${i % PRIMITIVE_SAMPLES}` }));
  await probes.drop().catch(() => undefined);

  const topic = `${prefix}bench-primitives`;
  const admin = platform.runtime.kafka.admin();
  const producer = platform.runtime.kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
  let produce: number;
  try {
    await admin.connect();
    await ensureTopics(admin, [topic], { partitions: 1, replicationFactor: 1 });
    await producer.connect();
    const value = Buffer.alloc(300, 1);
    produce = await p50Of((i) => producer.send({ topic, acks: -1, messages: [{ key: String(i), value }] }));
  } finally {
    await producer.disconnect().catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
  }

  const mailer = smtpMailer(env.SMTP_URL, 'bench@svc.local');
  let smtp: number;
  try {
    await mailer.verify();
    smtp = await p50Of(
      (i) =>
        mailer.send({
          to: `floor-${runId}-${i}@bench.local`,
          subject: 'floor',
          text: 'floor',
          html: '<p>floor</p>',
          messageId: `<floor-${runId}-${i}@svc.local>`,
        }),
      50,
    );
  } finally {
    mailer.close();
  }
  return { read, write, produce, smtp };
}

/**
 * The webhook's critical path as sequential steps: each is a brick above or a measured delivery.
 * Steps in parallel count once (the slower): billing's two reads, the issuer's claim beside its
 * read, the mailer's claim beside its wait for the key.
 */
function floorReport(p: Primitives, outcomes: readonly Outcome[]): { text: string; floor: number } {
  const hop = (from: Milestone, to: Milestone) => Math.max(0, hopStats(outcomes, from, to).p50);
  const steps: [string, number][] = [
    ['ingress: publish the webhook', p.produce],
    ['→ billing (Kafka delivery, measured)', hop('answered', 'billingReceived')],
    ['billing: read the subscription, publish subscription.created', p.read + p.produce],
    ['→ issuer (Kafka delivery, measured)', hop('subscriptionPublished', 'issuerReceived')],
    ['issuer: claim (a write, beside a read), publish key.generated', Math.max(p.write, p.read) + p.produce],
    ['issuer: keys projection (read, then guarded write)', p.read + p.write],
    ['mailer: sees the key in the projection (a read)', p.read],
    ['mailer: SMTP hand-off', p.smtp],
    ['bench: e-mail seen in Mailpit (measured)', hop('handedToSmtp', 'inMailpit')],
    ['bench: /validate answers valid (measured)', hop('inMailpit', 'valid')],
  ];
  const floor = steps.reduce((a, [, ms]) => a + ms, 0);
  const rows = [['step of the critical path', 'p50 ms'], ...steps.map(([name, ms]) => [name, fmt(ms)]), ['floor: their sum', fmt(floor)]];
  const text = [
    `bricks, each alone, p50: database read ${fmt(p.read)} ms, database write ${fmt(p.write)} ms, Kafka publish ${fmt(p.produce)} ms, SMTP hand-off ${fmt(p.smtp)} ms`,
    '',
    table(rows),
    '',
    'The floor is what the path costs with no waiting between its steps at all; end to end above it is the waiting.',
    '',
  ].join('\n');
  return { text, floor };
}

// ---------------------------------------------------------------------------------------------
// Main

async function main(): Promise<void> {
  let stack: Stack | undefined;
  let dataDir: string | undefined;
  let platform: RunningPlatform | undefined;
  const cleanup = async () => {
    const p = platform;
    platform = undefined;
    if (p) {
      await p.runtime.mongo.db.dropDatabase().catch(() => undefined);
      await p.stop().catch(() => undefined);
    }
    const s = stack;
    stack = undefined;
    await s?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    dataDir = undefined;
  };
  const offSignals = stopOnSignals(cleanup, err);

  try {
    const existing: Partial<StackEnv> = {
      ...(process.env.KAFKA_BROKERS ? { KAFKA_BROKERS: process.env.KAFKA_BROKERS } : {}),
      ...(process.env.MONGODB_URI ? { MONGODB_URI: process.env.MONGODB_URI } : {}),
      ...(process.env.SMTP_URL && process.env.MAILPIT_URL ? { SMTP_URL: process.env.SMTP_URL, MAILPIT_URL: process.env.MAILPIT_URL } : {}),
      ...(process.env.SCHEMA_REGISTRY_URL ? { SCHEMA_REGISTRY_URL: process.env.SCHEMA_REGISTRY_URL } : {}),
    };
    let env: StackEnv;
    let note: string;
    if (existing.KAFKA_BROKERS && existing.MONGODB_URI && existing.SMTP_URL && existing.SCHEMA_REGISTRY_URL) {
      env = existing as StackEnv;
      note = 'Kafka, MongoDB and Mailpit from the environment';
    } else {
      const base = resolve('.data');
      mkdirSync(base, { recursive: true });
      dataDir = mkdtempSync(join(base, 'bench-webhook-'));
      err(`starting a throwaway stack under ${dataDir}`);
      // Mailpit keeps every message: the bench reads each one back.
      stack = await startStack({ dataDir, ports: 'auto', existing, progress: err, mailMaxMessages: 0 });
      env = stack.env;
      note = Object.keys(existing).length
        ? 'a throwaway stack on this host (parts from the environment)'
        : 'a throwaway Kafka, FerretDB and Mailpit on this host';
    }

    const tracker: Tracker = { current: undefined, handedOver: undefined };
    const prefix = `bench${runId}.`;
    const groups = { billing: `${prefix}billing`, issuer: `${prefix}issuer`, mailer: `${prefix}mailer` };
    // Debug, so the timing lines are written; everything goes to the hook, nothing to a terminal.
    const log: Logger = pino(
      { level: 'debug', base: { system: 'svc' }, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } },
      hookDestination(tracker, groups, `${prefix}keys.events`),
    );
    const ports = { webhooks: await freePort(), keys: await freePort() };
    platform = await startServices(
      [keysService, webhookIngressService, billingService, mailerService],
      {
        NODE_ENV: 'test',
        LOG_LEVEL: 'debug',
        KAFKA_BROKERS: env.KAFKA_BROKERS,
        ...(process.env.KAFKA_BROKERS ? kafkaSecurityVariables(process.env) : {}),
        MONGODB_URI: env.MONGODB_URI,
        SMTP_URL: env.SMTP_URL,
        SCHEMA_REGISTRY_URL: env.SCHEMA_REGISTRY_URL,
        SCHEMA_REGISTER_AT_START: 'true',
        MONGODB_DB: `bench_${runId}`,
        KAFKA_TOPIC_PREFIX: prefix,
        KAFKA_PUBLISH_TIMEOUT_MS: '5000',
        HTTP_HOST: '127.0.0.1',
        WEBHOOKS_PORT: String(ports.webhooks),
        KEYS_PORT: String(ports.keys),
        PAYMENT_WEBHOOK_SECRET: SIGNING_SECRET,
        WEBHOOK_SECRET: 'ab'.repeat(32),
        KEY_ENCRYPTION_KEY: 'cd'.repeat(32),
        PAYMENT_VARIANT_TIERS: `${PRO_VARIANT}:pro`,
        PAYMENT_ALLOW_TEST_MODE: 'true',
        ...(process.env.KAFKA_COMMIT_INTERVAL_MS ? { KAFKA_COMMIT_INTERVAL_MS: process.env.KAFKA_COMMIT_INTERVAL_MS } : {}),
      },
      log,
    );
    const keysTopic = platform.runtime.catalog.topicOf('key.generated');
    if (keysTopic !== `${prefix}keys.events`)
      throw new Error(`key.generated is on ${keysTopic}, not ${prefix}keys.events: fix the bench's hook`);
    const target: Target = {
      webhooksUrl: `http://127.0.0.1:${ports.webhooks}`,
      keysUrl: `http://127.0.0.1:${ports.keys}`,
      mailpitUrl: env.MAILPIT_URL,
    };
    err(`services up: webhooks ${target.webhooksUrl}, keys ${target.keysUrl}, Mailpit ${target.mailpitUrl}`);

    if (BROKER_WARMUP > 0) {
      const warm = await warmBroker(platform.runtime.kafka, `${prefix}bench-warm-broker`, {
        sends: BROKER_WARMUP,
        groups: BROKER_WARMUP_GROUPS,
        progress: err,
      });
      err(`broker warmed: ${warm.sends} records to ${warm.groups} groups in ${(warm.ms / 1000).toFixed(1)} s`);
    }
    for (let i = 0; i < WARMUP; i++) await oneWebhook(target, tracker, Math.max(TIMEOUT_MS, 60_000));
    if (WARMUP) err(`warm-up: ${WARMUP} webhooks`);
    const idle = await idleCpu();
    const cpuBefore = sampleTreeCpu();
    const startedAt = performance.now();
    const outcomes: Outcome[] = [];
    for (let i = 0; i < N; i++) {
      outcomes.push(await oneWebhook(target, tracker, TIMEOUT_MS));
      if ((i + 1) % 50 === 0 || i + 1 === N) {
        const so = hopStats(outcomes, 'sent', 'valid');
        err(`${i + 1}/${N}: end to end p50 ${fmt(so.p50)} ms, p99 ${fmt(so.p99)} ms`);
      }
    }
    const cpuAfter = sampleTreeCpu();
    const elapsedMs = performance.now() - startedAt;
    const { text, p50, p99 } = report(outcomes, note);
    process.stdout.write(`${text}\n`);
    const cpu = cpuBefore && cpuAfter && idle ? cpuReport(cpuBetween(cpuBefore, cpuAfter), idle, elapsedMs, N) : undefined;
    if (cpu) process.stdout.write(`${cpu.text}\n`);
    else process.stdout.write('CPU per webhook: not measured (/proc is not readable here)\n\n');
    err('timing the bricks (database read and write, Kafka publish, SMTP) alone');
    const floor = floorReport(await measurePrimitives(platform, env, prefix), outcomes);
    process.stdout.write(`${floor.text}\n`);
    const notYetValid = outcomes.filter((o) => o.notYetValid).length;
    const figures: BenchFigure[] = [
      {
        figure: 'webhook → key e-mailed and valid, p50',
        ours: round1(p50),
        baseline: null,
        baselineName: null,
        unit: 'ms',
        target: '< 40 ms',
        met: p50 < 40,
      },
      {
        figure: 'webhook → key e-mailed and valid, p99',
        ours: round1(p99),
        baseline: null,
        baselineName: null,
        unit: 'ms',
        target: '< 250 ms',
        met: p99 < 250,
      },
      {
        figure: 'webhook → key floor (sum of its steps alone), p50',
        ours: round1(floor.floor),
        baseline: null,
        baselineName: null,
        unit: 'ms',
        target: '',
        met: null,
      },
      ...(cpu
        ? [
            {
              figure: 'CPU per webhook, every process of the stack, idle subtracted',
              ours: round1(cpu.total),
              baseline: null,
              baselineName: null,
              unit: 'ms',
              target: '',
              met: null,
            },
          ]
        : []),
      {
        figure: 'keys not yet valid when their e-mail arrived',
        ours: notYetValid,
        baseline: null,
        baselineName: null,
        unit: 'count',
        target: '0',
        met: notYetValid === 0,
      },
    ];
    for (const hop of HOPS.slice(0, -1)) {
      const s = hopStats(outcomes, hop.from, hop.to);
      if (s.n > 0)
        figures.push({
          figure: `hop p50: ${hop.name}`,
          ours: round1(s.p50),
          baseline: null,
          baselineName: null,
          unit: 'ms',
          target: '',
          met: null,
        });
    }
    emitFigures('webhook-to-key', figures);
  } finally {
    await cleanup();
    offSignals();
  }
}

const round1 = (x: number) => Math.round(x * 10) / 10;

/** How long the stack's idle CPU is sampled: its consumers' polls and heartbeats, Kafka's own timers. */
const IDLE_SAMPLE_MS = 3000;

/** CPU ms per second of each process of the stack with no webhook in flight (after the warm-up). */
async function idleCpu(): Promise<Map<string, number> | undefined> {
  const before = sampleTreeCpu();
  const started = performance.now();
  await new Promise((r) => setTimeout(r, IDLE_SAMPLE_MS));
  const after = sampleTreeCpu();
  if (!before || !after) return undefined;
  const seconds = (performance.now() - started) / 1000;
  return new Map([...cpuBetween(before, after)].map(([role, ms]) => [role, ms / seconds]));
}

/**
 * Each process's CPU per webhook over the measured phase, less what it spends idle in the same
 * time: the work one webhook sets off, wherever it runs. On a 2-core machine the sum against the
 * end-to-end time says how much of the wait is for CPU.
 */
function cpuReport(used: Map<string, number>, idlePerSecond: Map<string, number>, elapsedMs: number, webhooks: number) {
  const rows = [...used]
    .map(([role, ms]) => {
      const idle = ((idlePerSecond.get(role) ?? 0) * elapsedMs) / 1000;
      return {
        role,
        perWebhook: Math.max(0, ms - idle) / webhooks,
        share: ms / elapsedMs,
        idleShare: (idlePerSecond.get(role) ?? 0) / 1000,
      };
    })
    .filter((r) => r.perWebhook >= 0.05 || r.share >= 0.005)
    .sort((a, b) => b.perWebhook - a.perWebhook);
  const total = rows.reduce((sum, r) => sum + r.perWebhook, 0);
  const lines = [
    `CPU per webhook while the ${webhooks} ran one at a time (${(elapsedMs / 1000).toFixed(1)} s), each process's idle use subtracted`,
    '',
    `${'process'.padEnd(46)}  ${'ms/webhook'.padStart(10)}  ${'share of a core'.padStart(15)}  ${'idle share'.padStart(10)}`,
    `${'-'.repeat(46)}  ${'-'.repeat(10)}  ${'-'.repeat(15)}  ${'-'.repeat(10)}`,
    ...rows.map(
      (r) =>
        `${r.role.padEnd(46)}  ${fmt(r.perWebhook).padStart(10)}  ${`${Math.round(r.share * 100)} %`.padStart(15)}  ${`${Math.round(r.idleShare * 100)} %`.padStart(10)}`,
    ),
    `${'all'.padEnd(46)}  ${fmt(total).padStart(10)}`,
    '',
  ];
  return { text: lines.join('\n'), total };
}

await runMain(main, err);
