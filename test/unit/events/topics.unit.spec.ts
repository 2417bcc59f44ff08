import { expect } from 'chai';
import type { Admin } from 'kafkajs';
import { ensureTopics } from '../../../events/topics.ts';

/** What kafkajs throws when a broker's metadata has not caught up with a topic the controller made. */
const unknownTopic = () =>
  Object.assign(new Error('This server does not host this topic-partition'), { type: 'UNKNOWN_TOPIC_OR_PARTITION' });

/** An admin whose createTopics fails as kafkajs's waitForLeaders does on a loaded broker, then whose metadata catches up. */
function lateBroker(metadataMissesFirst: number, failWith = unknownTopic) {
  const calls = { create: 0, metadata: 0 };
  const admin = {
    listTopics: async () => [],
    createTopics: async () => {
      calls.create++;
      throw failWith();
    },
    fetchTopicMetadata: async ({ topics }: { topics: string[] }) => {
      calls.metadata++;
      if (calls.metadata <= metadataMissesFirst) throw unknownTopic();
      return { topics: topics.map((name) => ({ name, partitions: [{ partitionId: 0, leader: 1, replicas: [1], isr: [1] }] })) };
    },
  };
  return { admin: admin as unknown as Admin, calls };
}

describe('creating event topics (unit)', () => {
  it('waits for the leaders itself when the broker asked had not heard of the new topics yet', async () => {
    const { admin, calls } = lateBroker(2);
    expect(await ensureTopics(admin, ['t'], { partitions: 1, replicationFactor: 1 })).to.deep.equal(['t', 't.dlq']);
    expect(calls).to.deep.equal({ create: 1, metadata: 3 });
  });

  it('passes any other failure on', async () => {
    const { admin, calls } = lateBroker(0, () => Object.assign(new Error('not authorized'), { type: 'TOPIC_AUTHORIZATION_FAILED' }));
    const err = await ensureTopics(admin, ['t'], { partitions: 1, replicationFactor: 1 }).then(
      () => null,
      (e: unknown) => e,
    );
    expect((err as Error).message).to.equal('not authorized');
    expect(calls.metadata).to.equal(0);
  });
});
