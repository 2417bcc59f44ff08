import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { newEvent } from '../../../events/envelope.ts';
import { publishAndApply } from '../../../events/own-events.ts';
import { createAppRuntime } from '../../../app/runtime.ts';
import type { Runtime } from '../../../services/platform/runtime.ts';
import type { IndexCompleted, IndexRequested } from '../../../services/rag/events.ts';
import { JOB_SLOTS_COLLECTION, JobSlots } from '../../../services/rag/job-slots.ts';
import { jobsProjection } from '../../../services/rag/jobs.projection.ts';
import { testConfig, testLogger } from '../../support/env.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';

/**
 * A customer's index jobs queued or running at once are bounded (RAG_MAX_PENDING_JOBS), exactly,
 * whichever replica takes the request: the slots live in MongoDB. Real MongoDB-wire server and Kafka.
 */
describe("one customer's pending index jobs are bounded (integration)", function () {
  this.timeout(60_000);
  let rt: Runtime;
  let slots: JobSlots;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    rt = await createAppRuntime(testConfig(await useStack()), testLogger());
    slots = new JobSlots(rt.mongo.db);
  });
  after(async () => {
    await rt?.mongo.db.dropDatabase().catch(() => undefined);
    await rt?.close();
  });

  const customer = () => `cus-${randomUUID().slice(0, 8)}`;
  const recordJob = async (customerId: string, jobId: string, ended: boolean) => {
    const requested: IndexRequested = newEvent('rag.index-requested', {
      jobId,
      collectionId: `${customerId}:c`,
      customerId,
      collectionName: 'c',
      source: 'files',
      files: [],
      keyHash: null,
    });
    const events: Array<IndexRequested | IndexCompleted> = [requested];
    if (ended) {
      events.push(
        newEvent('rag.index-completed', {
          jobId,
          collectionId: `${customerId}:c`,
          customerId,
          filesIndexed: 0,
          filesUnchanged: 0,
          filesSkipped: 0,
          filesRemoved: 0,
          chunks: 0,
          durationMs: 1,
          manifest: [],
        }),
      );
    }
    await publishAndApply(rt.publisher, rt.mongo.db, jobsProjection, events);
  };

  it('grants a customer its limit of slots, concurrently, and not one more; another customer has its own', async () => {
    const acme = customer();
    const claims = await Promise.all(Array.from({ length: 10 }, () => slots.claim(acme, randomUUID(), 3)));
    expect(claims.filter(Boolean)).to.have.length(3);
    expect(await slots.claim(customer(), randomUUID(), 3)).to.equal(true);
  });

  it('frees a slot when its job is released, and a release given twice frees nothing more', async () => {
    const acme = customer();
    const first = randomUUID();
    expect(await slots.claim(acme, first, 1)).to.equal(true);
    expect(await slots.claim(acme, randomUUID(), 1)).to.equal(false);
    await slots.release(first);
    const second = randomUUID();
    expect(await slots.claim(acme, second, 1)).to.equal(true);
    await slots.release(first);
    expect(await slots.claim(acme, randomUUID(), 1)).to.equal(false);
    await slots.release(second);
  });

  it('frees, when all are taken, an old slot whose job has ended or was never recorded, but not one whose job is under way', async () => {
    const acme = customer();
    const old = new Date(Date.now() - 120_000);
    const [ended, running, neverRecorded] = [randomUUID(), randomUUID(), randomUUID()];
    await recordJob(acme, ended, true);
    await recordJob(acme, running, false);
    // Releases lost to a crash: the slot documents stay behind, claimed two minutes ago.
    await rt.mongo.db.collection(JOB_SLOTS_COLLECTION).insertMany([
      { _id: `${acme}#0` as never, customerId: acme, slot: 0, jobId: ended, claimedAt: old },
      { _id: `${acme}#1` as never, customerId: acme, slot: 1, jobId: running, claimedAt: old },
      { _id: `${acme}#2` as never, customerId: acme, slot: 2, jobId: neverRecorded, claimedAt: old },
    ]);
    expect(await slots.claim(acme, randomUUID(), 3)).to.equal(true);
    expect(await slots.claim(acme, randomUUID(), 3)).to.equal(true);
    // The running job's slot stays taken.
    expect(await slots.claim(acme, randomUUID(), 3)).to.equal(false);
    const held = await rt.mongo.db.collection(JOB_SLOTS_COLLECTION).find({ customerId: acme }).toArray();
    expect(held.map((doc) => doc.jobId)).to.include(running);
    expect(held.map((doc) => doc.jobId)).to.not.include.members([ended, neverRecorded]);
  });
});
