import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import type { Kafka } from 'kafkajs';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { EventCatalog } from '../../events/catalog.ts';
import { newEvent } from '../../events/envelope.ts';
import { createKafka } from '../../events/kafka.ts';
import { EventPublisher } from '../../events/publisher.ts';
import { ensureTopics } from '../../events/topics.ts';
import { testEnv, testLogger } from '../support/env.ts';
import { probeDefinitions } from '../support/probe.ts';
import { registeredCodec } from '../support/registered-codec.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';

const run = promisify(execFile);
const EVOLUTION_N1 = join(import.meta.dirname, '..', 'fixtures', 'schemas-evolution', 'n1');

/** `svc topics tail`: any topic's records decoded through the registry, as an operator runs it. */
describe('svc topics tail (e2e)', function () {
  this.timeout(120_000);
  let stack: StackEnv;
  let env: NodeJS.ProcessEnv;
  let kafka: Kafka;

  const svc = async (...args: string[]) =>
    run(process.execPath, ['--disable-warning=TimeoutNegativeWarning', 'app/cli/svc.ts', ...args], {
      env: { ...process.env, ...env },
      timeout: 60_000,
    });

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    stack = await useStack();
    env = testEnv(stack);
    kafka = createKafka({ brokers: [stack.KAFKA_BROKERS], clientId: 'tail-test' }, testLogger());
  });

  it('prints the records from --from as JSON, decoded with the writer schema the registry holds for their id', async () => {
    const topic = `${env.KAFKA_TOPIC_PREFIX}probe.tail`;
    const admin = kafka.admin();
    await admin.connect();
    await ensureTopics(admin, [topic], { partitions: 1, replicationFactor: 1 });
    await admin.disconnect();
    const catalog = new EventCatalog(probeDefinitions(topic, { withReset: false }), EVOLUTION_N1);
    const codec = await registeredCodec(catalog, stack);
    const publisher = new EventPublisher(kafka, codec, { timeoutMs: 5000 });
    const events = [0, 1, 2].map((seq) =>
      newEvent('probe.recorded', { probeId: 'p', seq, note: `n${seq}`, weight: seq, channel: 'CLI', region: 'eu' }),
    );
    try {
      await publisher.publishOrdered(events);
    } finally {
      await publisher.disconnect();
    }
    const id = codec.idOf(catalog.current('probe.recorded'));

    const { stdout } = await svc('topics', 'tail', 'probe.tail', '--from', 'beginning', '--limit', '3', '--json');
    const lines = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => [l.topic, l.offset, l.type, l.key, l.schemaId])).to.deep.equal([
      [topic, '0', 'probe.recorded', 'p', id],
      [topic, '1', 'probe.recorded', 'p', id],
      [topic, '2', 'probe.recorded', 'p', id],
    ]);
    expect(lines[2]!.value).to.deep.include({
      probeId: 'p',
      seq: 2,
      note: 'n2',
      weight: 2,
      channel: 'CLI',
      region: 'eu',
      eventId: events[2]!.metadata.eventId,
    });

    const fromOffset = await svc('topics', 'tail', topic, '--from', '2', '--limit', '1');
    expect(fromOffset.stdout).to.match(new RegExp(`^0@2 \\S+ probe.recorded key=p schema=${id} \\{.*"seq":2.*"channel":"CLI"`));
  });

  it('refuses a topic that does not exist, and a --from it cannot read', async () => {
    const unknown = await svc('topics', 'tail', 'no.such.topic', '--limit', '1').catch((e: { code: number; stderr: string }) => e);
    expect(unknown).to.deep.include({ code: 64 });
    const badFrom = await svc('topics', 'tail', 'probe.tail', '--from', 'yesterday').catch((e: { code: number; stderr: string }) => e);
    expect(badFrom).to.deep.include({ code: 64 });
    expect((badFrom as { stderr: string }).stderr).to.match(/--from takes beginning, end, an offset or an ISO time/);
  });
});
