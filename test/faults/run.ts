/**
 * `npm run faults`: the system under restarts, crashes and outages, against the real local stack,
 * with every service in a process of its own as production runs them. Prints what it did and one
 * table of counts, and exits 1 unless every count is 0.
 *
 *   1. the whole system (services and servers) restarted 5 times during a stream of sign-ups and webhooks;
 *   2. each consumer process (accounts, keys, billing, mailer) killed with SIGKILL 10 times during 1,000 webhooks;
 *   3. Kafka stopped and started again, then the database server, during load.
 *
 * FAULTS_SCALE (default 1) scales the traffic, e.g. 0.2 for a quick look.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { freePort } from '../../deploy/local/processes.ts';
import { startStack, type Stack, type StackPorts } from '../../deploy/local/stack.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { createAppRuntime } from '../../app/runtime.ts';
import { audit, settle, type Audit } from './audit.ts';
import { ServiceProcess } from './service-processes.ts';
import { Traffic } from './traffic.ts';

const VARIANT = 900_001;
const scale = Number(process.env.FAULTS_SCALE ?? 1);
const log = (line: string) => process.stderr.write(`${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const n = (count: number) => Math.max(1, Math.round(count * scale));
/** FAULTS_PHASES=1,3 runs only those phases (for investigating one kind of fault). */
const phases = new Set((process.env.FAULTS_PHASES ?? '1,2,3').split(',').map((p) => Number(p.trim())));

async function main(): Promise<number> {
  if (process.env.KAFKA_BROKERS || process.env.MONGODB_URI || process.env.SMTP_URL) {
    log('faults: this suite stops and restarts its own servers; unset KAFKA_BROKERS, MONGODB_URI and SMTP_URL');
    return 64;
  }
  const base = resolve('.data');
  mkdirSync(base, { recursive: true });
  const dataDir = mkdtempSync(join(base, 'faults-'));
  const signingSecret = randomBytes(16).toString('hex');
  let stack: Stack | undefined;
  let services: ServiceProcess[] = [];
  const startedAt = Date.now();
  try {
    log(`faults: local stack under ${dataDir}`);
    stack = await startStack({ dataDir, ports: 'auto', mailMaxMessages: 0, progress: (l) => log(`  ${l}`) });
    const stackPorts: StackPorts = stack.ports;
    const ports = {
      accounts: await freePort(),
      keys: await freePort(),
      webhooks: await freePort(),
      billing: await freePort(),
      mailer: await freePort(),
    };
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NODE_ENV: 'test',
      LOG_LEVEL: process.env.FAULTS_LOG_LEVEL ?? 'warn',
      ...stack.env,
      // The stack's deploy step: schemas registered by the processes as they start.
      SCHEMA_REGISTER_AT_START: 'true',
      MONGODB_DB: 'faults',
      KAFKA_TOPIC_PREFIX: 'faults.',
      HTTP_HOST: '127.0.0.1',
      JWT_SECRET: randomBytes(32).toString('hex'),
      WEBHOOK_SECRET: randomBytes(32).toString('hex'),
      PAYMENT_WEBHOOK_SECRET: signingSecret,
      KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      PAYMENT_VARIANT_TIERS: `${VARIANT}:pro`,
      // The traffic sends the provider's sample payloads, which are test-mode events.
      PAYMENT_ALLOW_TEST_MODE: 'true',
      // The traffic signs everyone up from 127.0.0.1; the sign-up limits are not what this suite tests.
      SIGNUPS_PER_IP_PER_HOUR: '1000000',
      SIGNUPS_PER_MINUTE: '1000000',
      // A killed member's partitions wait for its session to expire: 10 s keeps the suite short.
      KAFKA_SESSION_TIMEOUT_MS: '10000',
      EFFECT_LEASE_MS: '5000',
      ACCOUNTS_PORT: String(ports.accounts),
      KEYS_PORT: String(ports.keys),
      WEBHOOKS_PORT: String(ports.webhooks),
    };
    const logs = join(dataDir, 'services');
    mkdirSync(logs, { recursive: true });
    services = [
      new ServiceProcess('accounts', env, ports.accounts, logs),
      new ServiceProcess('keys', env, ports.keys, logs),
      new ServiceProcess('webhooks', env, ports.webhooks, logs),
      new ServiceProcess('billing', { ...env, OPS_PORT: String(ports.billing) }, ports.billing, logs),
      new ServiceProcess('mailer', { ...env, OPS_PORT: String(ports.mailer) }, ports.mailer, logs),
    ];
    const startAll = async () => {
      for (const s of services) await s.start();
    };
    const stopAll = async () => Promise.all(services.map((s) => s.stop()));
    await startAll();
    const traffic = new Traffic(
      { accounts: `http://127.0.0.1:${ports.accounts}`, webhooks: `http://127.0.0.1:${ports.webhooks}`, signingSecret, variant: VARIANT },
      600_000,
    );

    // 1. The whole system restarted 5 times during a stream.
    let stopMs = 0;
    if (phases.has(1)) {
      log(`\nphase 1: the whole system restarted 5 times during ${n(150)} sign-ups and ${n(250)} webhooks`);
      const load = traffic.run({ signUps: n(150), webhooks: n(250), perSecond: 6 });
      for (let i = 1; i <= 5; i++) {
        await sleep(8000 * Math.min(1, scale * 2));
        const at = Date.now();
        await stopAll();
        await stack.stop();
        stopMs = Math.max(stopMs, Date.now() - at);
        stack = await startStack({ dataDir, ports: stackPorts, mailMaxMessages: 0, progress: () => undefined });
        await startAll();
        log(`  restart ${i}: down and up again in ${((Date.now() - at) / 1000).toFixed(1)} s`);
      }
      await load;
    }

    // 2. Each consumer process killed 10 times during 1,000 webhooks.
    const consumers = services.filter((s) => s.name !== 'webhooks');
    let kills = 0;
    if (phases.has(2)) {
      log(
        `\nphase 2: ${consumers.map((s) => s.name).join(', ')} each killed (SIGKILL) 10 times during ${n(1000)} webhooks and ${n(100)} sign-ups`,
      );
      const load = traffic.run({ signUps: n(100), webhooks: n(1000), perSecond: 6 });
      await Promise.all(
        consumers.map(async (proc, index) => {
          await sleep(1000 + index * 700);
          for (let k = 0; k < 10; k++) {
            await sleep(1500 + Math.random() * 3000);
            await proc.kill();
            kills++;
            await proc.start();
          }
        }),
      );
      log(`  ${kills} kills done`);
      await load;
    }

    // 3. Kafka, then the database server, stopped and started again during load.
    if (phases.has(3)) {
      log(`\nphase 3: Kafka, then the database server, stopped for 10 s each during ${n(300)} webhooks and ${n(60)} sign-ups`);
      const load = traffic.run({ signUps: n(60), webhooks: n(300), perSecond: 6 });
      for (const part of ['kafka', 'mongo'] as const) {
        await sleep(6000);
        const component = stack.component(part);
        await component.stop();
        log(`  ${part} stopped`);
        await sleep(10_000);
        await component.start();
        log(`  ${part} back`);
      }
      await load;
    }

    log('\nsettling: waiting for every consumer group to read everything');
    const config = loadConfig({ ...env, LOG_LEVEL: 'warn' });
    const rt = await createAppRuntime(config, createLogger('warn'), { provisionTopics: false });
    let counts: Audit;
    let resentAfterKill: number;
    try {
      await settle(rt, log);
      const mailerKills = services.find((s) => s.name === 'mailer')?.kills ?? [];
      ({ counts, resentAfterKill } = await audit(rt, stack.env.MAILPIT_URL, traffic.record, log, {
        mailerKills,
        effectLeaseMs: config.effectLeaseMs,
      }));
    } finally {
      await rt.close();
    }

    const width = Math.max(...Object.keys(counts).map((k) => k.length));
    process.stdout.write(
      `\nfault suite: ${traffic.record.signedUp.length} sign-ups answered 201, ${traffic.record.subscribed.length} webhooks answered 200, ` +
        `${traffic.record.retried} client retries; 5 full restarts (longest stop ${(stopMs / 1000).toFixed(1)} s), ${kills} SIGKILLs, Kafka and database outages; ` +
        `${Math.round((Date.now() - startedAt) / 1000)} s\n\n`,
    );
    process.stdout.write(`| ${'count'.padEnd(width)} | value |\n|${'-'.repeat(width + 2)}|-------|\n`);
    for (const [name, value] of Object.entries(counts)) process.stdout.write(`| ${name.padEnd(width)} | ${String(value).padStart(5)} |\n`);
    process.stdout.write(
      `\n${resentAfterKill} e-mail(s) re-sent with the same Message-ID because a mailer was killed between SMTP's 250 and its record (SMTP has no atomic accept-and-record; a receiver drops the copy by Message-ID)\n`,
    );
    const lost = Object.values(counts).some((v) => v !== 0);
    process.stdout.write(lost ? '\nFAIL: something was lost or applied twice\n' : '\nall zero\n');
    return lost ? 1 : 0;
  } finally {
    for (const s of services) await s.stop().catch(() => undefined);
    await stack?.stop().catch(() => undefined);
    if (process.env.FAULTS_KEEP_DATA !== '1') rmSync(dataDir, { recursive: true, force: true });
    else log(`data kept in ${dataDir}`);
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    log(`faults: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
