import { randomUUID } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { expect } from 'chai';
import type { Admin, Kafka } from 'kafkajs';
import type { Component, StackEnv } from '../../../deploy/local/stack.ts';
import { ConsumerRunner } from '../../../events/consumer.ts';
import type { EventLog } from '../../../events/event-log.ts';
import { createKafka } from '../../../events/kafka.ts';
import { EventPublisher } from '../../../events/publisher.ts';
import { ensureTopics } from '../../../events/topics.ts';
import { eventually, testLogger } from '../../support/env.ts';
import { probeCatalog, recorded, uniqueTopic } from '../../support/probe.ts';
import { registeredCodec } from '../../support/registered-codec.ts';
import { STACK_TIMEOUT_MS, useStack, ownKafka } from '../../support/stack.ts';

/** An EventLog that keeps the messages kafkajs logs, to wait on what the client did. */
function recordingLog(lines: string[]): EventLog {
  const keep = (_fields: object, message?: string) => void (message && lines.push(message));
  const log: EventLog = { child: () => log, debug: () => undefined, info: keep, warn: keep, error: keep };
  return log;
}

/**
 * A broker that stops answering without closing its connections (a long GC pause, a frozen VM): the
 * client's request times out, though the broker may still append the request once it wakes.
 */
describe('a publisher across a frozen broker (integration)', function () {
  this.timeout(180_000);
  let env: StackEnv;
  let kafkaServer: Component;
  let kafka: Kafka;
  let admin: Admin;
  const lines: string[] = [];

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    env = await useStack();
    kafkaServer = await ownKafka(this);
    kafka = createKafka({ brokers: [env.KAFKA_BROKERS], clientId: 'freeze-test' }, recordingLog(lines));
    admin = kafka.admin();
    await admin.connect();
  });

  after(async () => {
    await admin?.disconnect().catch(() => undefined);
  });

  /** The broker's JVM: the child of the supervising script the stack started (from /proc: no procps needed). */
  const brokerPid = (): number => {
    const supervisor = kafkaServer.processes.at(-1)!.pid!;
    const parentOf = (pid: string): number | undefined => {
      try {
        return Number(/\) \S+ (\d+)/.exec(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.[1]);
      } catch {
        return undefined; // it exited while /proc was listed
      }
    };
    const children = readdirSync('/proc').filter((pid) => /^\d+$/.test(pid) && parentOf(pid) === supervisor);
    if (children.length !== 1) throw new Error(`expected one broker process under ${supervisor}, found ${children.length}`);
    return Number(children[0]);
  };

  it('loses no event published together with one whose request timed out: each lands once, at the offset it was acknowledged at', async () => {
    const topic = uniqueTopic('freeze');
    await ensureTopics(admin, [topic], { partitions: 1, replicationFactor: 1 });
    const codec = await registeredCodec(probeCatalog(topic), env);
    const publisher = new EventPublisher(kafka, codec, { timeoutMs: 60_000 });
    const pid = brokerPid();
    let frozen = false;
    try {
      await publisher.publish(recorded('warm-up', 0));
      process.kill(pid, 'SIGSTOP');
      frozen = true;
      const from = lines.length;
      const sends = ['a', 'b', 'c'].map((id, i) => publisher.publishOrdered([recorded(id, i + 1)]));
      // Two request timeouts: the first send's, then whichever went out next with the sequence number
      // kafkajs gave back (without the line another send's, with it the first one's retry).
      await eventually(
        'two produce requests timed out',
        async () => (lines.slice(from).filter((l) => /timed out/i.test(l)).length >= 2 ? true : undefined),
        60_000,
      );
      process.kill(pid, 'SIGCONT');
      frozen = false;
      const acknowledged = Object.fromEntries((await Promise.all(sends)).map(([p], i) => [['a', 'b', 'c'][i]!, p!.offset]));

      const seen = new Map<string, string[]>();
      const reader = new ConsumerRunner({
        kafka,
        codec,
        publisher,
        log: testLogger(),
        groupId: `freeze-${randomUUID()}`,
        topics: [topic],
        commitOffsets: false,
        handler: {
          handle: async (events) => {
            for (const e of events) {
              const id = (e.data as { probeId: string }).probeId;
              seen.set(id, [...(seen.get(id) ?? []), e.position.offset]);
            }
          },
        },
      });
      await reader.start();
      try {
        // Every send settled, so nothing lands any more: the log is read to its end.
        const high = (await admin.fetchTopicOffsets(topic))[0]!.high;
        const records = () => [...seen.values()].reduce((n, offsets) => n + offsets.length, 0);
        await eventually(`the topic read to offset ${high}`, async () => (records() >= Number(high) ? true : undefined), 20_000);
      } finally {
        await reader.stop();
      }
      // Each event once, where the broker said it put it: none dropped, none appended twice.
      const log = Object.fromEntries(['a', 'b', 'c'].map((id) => [id, seen.get(id) ?? []]));
      expect(log, `acknowledged at ${JSON.stringify(acknowledged)}`).to.deep.equal(
        Object.fromEntries(Object.entries(acknowledged).map(([id, offset]) => [id, [offset]])),
      );
    } finally {
      if (frozen) process.kill(pid, 'SIGCONT');
      await publisher.disconnect();
    }
  });
});
