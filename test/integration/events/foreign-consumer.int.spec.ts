import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { expect } from 'chai';
import { Kafka, logLevel } from 'kafkajs';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';

/**
 * What a customer's data team (or Kafka Connect, ksqlDB, kcat) does with svc's topics: read them
 * with kafkajs and a registry client, and nothing of svc. svc code only publishes, in a process of
 * its own (test/support/publish-probes.ts); the stack's addresses come from the test set-up.
 */
describe('svc topics read by a consumer that knows only Kafka and the registry (integration)', () => {
  let brokers: string;
  let registryUrl: string;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    const stack = await useStack();
    brokers = stack.KAFKA_BROKERS;
    registryUrl = stack.SCHEMA_REGISTRY_URL;
  });

  it('decodes every record with the writer schema it fetches by the id in the record', async function () {
    this.timeout(60_000);
    const topic = `test.foreign.${randomUUID().slice(0, 8)}`;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [join(import.meta.dirname, '..', '..', 'support', 'publish-probes.ts')],
      { env: { ...process.env, KAFKA_BROKERS: brokers, SCHEMA_REGISTRY_URL: registryUrl, PROBE_TOPIC: topic, PROBE_COUNT: '6' } },
    );
    const published = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      // The publisher's own log lines (JSON too, on the same stdout) are not records.
      .filter((line) => 'probeId' in line);

    const registry = new SchemaRegistry({ host: registryUrl });
    const kafka = new Kafka({ clientId: 'foreign', brokers: [brokers], logLevel: logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId: `foreign-${randomUUID()}` });
    const decoded: Record<string, unknown>[] = [];
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      // Bounded below the test's own timeout, so the finally below always disconnects the consumer: a
      // consumer left running keeps the run's process alive after mocha ends.
      let deadline: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve, reject) => {
        deadline = setTimeout(() => reject(new Error(`decoded ${decoded.length} of ${published.length} records in 45 s`)), 45_000);
        void consumer
          .run({
            eachMessage: async ({ message }) => {
              decoded.push((await registry.decode(message.value!)) as Record<string, unknown>);
              if (decoded.length === published.length) resolve();
            },
          })
          .catch(reject);
      }).finally(() => clearTimeout(deadline));
    } finally {
      await consumer.disconnect();
    }
    const bySeq = (a: Record<string, unknown>, b: Record<string, unknown>) => Number(a.seq) - Number(b.seq);
    expect(decoded.sort(bySeq).map((r) => ({ ...r }))).to.deep.equal(
      published.sort(bySeq).map((p) => ({
        eventId: p.eventId,
        occurredAt: p.occurredAt,
        correlationId: p.correlationId,
        causationId: null,
        probeId: p.probeId,
        seq: p.seq,
        note: p.note,
        weight: p.weight,
        channel: 'CLI',
        region: 'eu',
      })),
    );
  });
});
