import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Collection, Document } from 'mongodb';
import { projectionCollection } from '../../../events/collections.ts';
import { newEvent, type DeliveredEvent } from '../../../events/envelope.ts';
import { applyEvents, findStored, projectedFields } from '../../../events/projection.ts';
import { connectMongo, type MongoHandle } from '../../../services/platform/mongo.ts';
import { countsOf, usageDocumentId, usageProjection, type UsageDocument } from '../../../services/keys/usage.ts';
import { countedCalls } from '../../support/counted-collection.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';

/**
 * applyEvents with documents its caller read already (the issuer reads the keys document while it
 * publishes the key, issue 37): the first attempt does not read them again, and one that changed
 * since is caught by the write's guard and applied afresh, on the local stack's database (FerretDB).
 */
describe("applying events with the caller's read (integration)", () => {
  let handle: MongoHandle;
  let offset = 0;
  const keyHash = 'c'.repeat(64);
  const period = '2026-11';
  const id = usageDocumentId(keyHash, period);
  const used = (amount: number): DeliveredEvent =>
    ({
      ...newEvent('usage.incremented', { keyHash, metric: 'queries', amount, period }),
      position: { topic: 'usage.events', partition: 0, offset: String(offset++) },
    }) as DeliveredEvent;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    const env = await useStack();
    handle = await connectMongo(env.MONGODB_URI, `test_${randomUUID().slice(0, 8)}`);
  });

  after(async () => {
    await handle?.db.dropDatabase().catch(() => undefined);
    await handle?.client.close();
  });

  /** The collection, counting the documents looked up through it. */
  async function counted(): Promise<{ collection: Collection<Document>; lookups: () => number }> {
    const { collection, calls } = countedCalls(await projectionCollection(handle.db, usageProjection.collection), ['findOne']);
    return { collection, lookups: calls };
  }

  it('takes the documents the caller read (absent ones too) instead of reading them again', async () => {
    const { collection, lookups } = await counted();
    await applyEvents(collection, usageProjection, [used(2)], undefined, new Map([[id, null]]));
    const read = await findStored(collection, { _id: id });
    const before = lookups();
    await applyEvents(collection, usageProjection, [used(3)], undefined, new Map([[id, read]]));
    expect(lookups() - before, 'no read of its own').to.equal(0);
    expect(countsOf(projectedFields<UsageDocument>(await findStored(collection, { _id: id }))).queries).to.equal(5);
  });

  it('applies afresh when the document changed after the caller read it, or was made meanwhile', async () => {
    const { collection } = await counted();
    const stale = await findStored(collection, { _id: id });
    // Another writer (the projection's consumer) applies an event in between.
    await applyEvents(collection, usageProjection, [used(10)]);
    await applyEvents(collection, usageProjection, [used(1)], undefined, new Map([[id, stale]]));
    expect(countsOf(projectedFields<UsageDocument>(await findStored(collection, { _id: id }))).queries, 'nothing overwritten').to.equal(16);

    const other = usageDocumentId('d'.repeat(64), period);
    const onOther = (amount: number, at: number): DeliveredEvent =>
      ({
        ...newEvent('usage.incremented', { keyHash: 'd'.repeat(64), metric: 'queries', amount, period }),
        position: { topic: 'usage.events', partition: 1, offset: String(at) },
      }) as DeliveredEvent;
    await applyEvents(collection, usageProjection, [onOther(4, 0)]);
    const event = onOther(4, 1);
    // Read as absent before the document was made: the insert is refused and the retry reads it.
    await applyEvents(collection, usageProjection, [event], undefined, new Map([[other, null]]));
    expect(countsOf(projectedFields<UsageDocument>(await findStored(collection, { _id: other }))).queries).to.equal(8);
  });
});
