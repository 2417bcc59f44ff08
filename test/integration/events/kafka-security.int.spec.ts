import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import type { Kafka } from 'kafkajs';
import { pino } from 'pino';
import { ConsumerRunner, eachEvent } from '../../../events/consumer.ts';
import type { DeliveredEvent } from '../../../events/envelope.ts';
import { createKafka } from '../../../events/kafka.ts';
import { EventPublisher } from '../../../events/publisher.ts';
import { ensureTopics } from '../../../events/topics.ts';
import type { KafkaScramListener } from '../../../deploy/local/kafka/scram-listener.ts';
import { loadConfig, type Config } from '../../../services/platform/config.ts';
import { REDACTED_PATHS } from '../../../services/platform/logger.ts';
import { eventually } from '../../support/env.ts';
import { probeCatalog, recorded, uniqueTopic } from '../../support/probe.ts';
import { registeredCodec } from '../../support/registered-codec.ts';
import type { StackEnv } from '../../../deploy/local/stack.ts';
import { STACK_TIMEOUT_MS, currentStack, useStack } from '../../support/stack.ts';

/**
 * Issue 15, item 4: a broker that takes SASL/SCRAM-SHA-512 only (the local stack's second
 * listener), reached through the platform's own configuration (KAFKA_SASL_*) and client.
 */
describe('Kafka with SASL/SCRAM (integration)', function () {
  this.timeout(60_000);
  let scram: KafkaScramListener;
  const lines: string[] = [];
  // The platform's logger settings, writing where the test can read every line.
  const log = pino(
    { level: 'debug', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } },
    new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(chunk.toString()), done()) }),
  );
  const cleanups: (() => Promise<unknown>)[] = [];
  let registry: StackEnv;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    registry = await useStack();
    const listener = (await currentStack()).kafkaScram;
    // KAFKA_BROKERS named an existing broker: it has no listener of ours to test against.
    if (!listener) this.skip();
    scram = listener;
  });

  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  });

  const configWith = (env: NodeJS.ProcessEnv): Config =>
    loadConfig({ NODE_ENV: 'test', KAFKA_BROKERS: scram.brokers, KAFKA_CLIENT_ID: `sasl-${randomUUID().slice(0, 8)}`, ...env });

  const saslEnv = (password: string): NodeJS.ProcessEnv => ({
    KAFKA_SASL_MECHANISM: 'scram-sha-512',
    KAFKA_SASL_USERNAME: scram.username,
    KAFKA_SASL_PASSWORD: password,
  });

  it('publishes and consumes an event with the configured SCRAM credentials', async () => {
    const config = configWith(saslEnv(scram.password));
    const kafka = createKafka(config.kafka, log);
    const topic = uniqueTopic('sasl');
    const admin = kafka.admin();
    cleanups.push(() => admin.disconnect());
    await admin.connect();
    await ensureTopics(admin, [topic], { partitions: 1, replicationFactor: 1 });

    const codec = await registeredCodec(probeCatalog(topic), registry);
    const publisher = new EventPublisher(kafka, codec, { timeoutMs: 10_000 });
    cleanups.push(() => publisher.disconnect());
    const seen: DeliveredEvent[] = [];
    const runner = new ConsumerRunner({
      kafka,
      codec,
      publisher,
      log,
      groupId: `g-${randomUUID()}`,
      topics: [topic],
      handler: eachEvent(async (e) => void seen.push(e)),
      retries: 1,
      backoff: { initialMs: 10, maxMs: 50 },
    });
    cleanups.push(() => runner.stop());
    await runner.start();

    const event = recorded('p-1', 1, 'over SASL');
    await publisher.publish([event]);
    const got = await eventually('the event back through the SASL listener', async () =>
      seen.find((e) => e.metadata.eventId === event.metadata.eventId),
    );
    expect(got.data).to.deep.include({ probeId: 'p-1', seq: 1 });
  });

  it('refuses a wrong password with an error that names SCRAM and leaks no password', async () => {
    const wrong = `wrong-${randomUUID()}`;
    const kafka = createKafka(configWith(saslEnv(wrong)).kafka, log);
    const failure = await connectFailure(kafka);
    expect(failure.name).to.equal('KafkaJSSASLAuthenticationError');
    expect(failure.message).to.match(/SCRAM SHA512 authentication failed/);
    expect(failure.message).to.match(/invalid credentials/i);
    for (const secret of [wrong, scram.password]) {
      expect(failure.message).not.to.include(secret);
      expect(lines.join('')).not.to.include(secret);
    }
  });

  it('is refused without SASL: the secured listener takes no anonymous client', async () => {
    const kafka = createKafka(configWith({}).kafka, log);
    const failure = await connectFailure(kafka);
    // The broker hangs up on the first request that is not part of a SASL handshake.
    expect(failure.name).to.equal('KafkaJSConnectionClosedError');
  });

  it('has `svc topics` (an ops command) exit as a configuration error for a wrong password, without printing it', async () => {
    const wrong = `wrong-${randomUUID()}`;
    const env = { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'silent', KAFKA_BROKERS: scram.brokers, ...saslEnv(wrong) };
    const result = await new Promise<{ code: number | null; stderr: string; stdout: string }>((resolve) => {
      const child = execFile(process.execPath, ['app/cli/svc.ts', 'topics'], { env, timeout: 45_000 }, (_err, stdout, stderr) =>
        resolve({ code: child.exitCode, stdout, stderr }),
      );
    });
    expect(result.stderr).to.match(
      /Kafka refused the credentials \(check KAFKA_SASL_MECHANISM, KAFKA_SASL_USERNAME, KAFKA_SASL_PASSWORD\): SASL SCRAM SHA512 authentication failed/,
    );
    expect(result.code).to.equal(78);
    expect(result.stderr + result.stdout).not.to.include(wrong);
  });

  it('keeps the password out of the configuration when it is logged or printed', () => {
    const config = configWith(saslEnv(scram.password));
    expect(config.kafka.sasl?.password).to.equal(scram.password);
    log.info({ kafka: config.kafka }, 'configured');
    expect(JSON.stringify(config)).not.to.include(scram.password);
    expect(lines.join('')).not.to.include(scram.password);
    expect(lines.join('')).to.include(scram.username);
  });

  async function connectFailure(kafka: Kafka): Promise<Error> {
    const admin = kafka.admin();
    cleanups.push(() => admin.disconnect());
    try {
      await admin.connect();
      await admin.listTopics();
    } catch (err) {
      return err as Error;
    }
    throw new Error('the SASL listener let the client in');
  }
});
