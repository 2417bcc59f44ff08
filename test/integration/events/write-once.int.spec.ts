import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Collection, Document } from 'mongodb';
import { newEvent, type DeliveredEvent, type Event } from '../../../events/envelope.ts';
import { applyEvents, findStored, type Projection } from '../../../events/projection.ts';
import { connectMongo, type MongoHandle } from '../../../services/platform/mongo.ts';
import { countedCalls } from '../../support/counted-collection.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';

interface FirstUse {
  amount: number;
}

/**
 * A write-once projection (the audit log's kind, issue 37): a chunk is inserted without a read, a
 * document already there keeps what it holds, and a redelivered chunk changes nothing, on the
 * local stack's database (FerretDB).
 */
describe('a write-once projection (integration)', () => {
  let handle: MongoHandle;
  const period = '2026-11';
  const firstUse: Projection<FirstUse & Document> = {
    name: 'first-use',
    collection: `first_use_${randomUUID().slice(0, 8)}`,
    handles: ['usage.incremented'],
    documentId: (e) => String((e.data as { keyHash: string }).keyHash),
    evolve: (doc, e) => doc ?? { amount: (e.data as { amount: number }).amount },
    writeOnce: true,
  };
  const used = (key: string, amount: number, offset: number): DeliveredEvent =>
    ({
      ...newEvent('usage.incremented', { keyHash: key.repeat(64), metric: 'queries', amount, period }),
      position: { topic: 'usage.events', partition: 0, offset: String(offset) },
    }) as DeliveredEvent<Event>;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    const env = await useStack();
    handle = await connectMongo(env.MONGODB_URI, `test_${randomUUID().slice(0, 8)}`);
  });

  after(async () => {
    await handle?.db.dropDatabase().catch(() => undefined);
    await handle?.client.close();
  });

  /** The collection, counting its reads. */
  function counted(): { collection: Collection<Document>; reads: () => number } {
    const { collection, calls } = countedCalls(handle.db.collection(firstUse.collection), ['findOne', 'find']);
    return { collection, reads: calls };
  }

  it('inserts each document from its first event without reading, and keeps it as the first chunk made it', async () => {
    const { collection, reads } = counted();
    const first = [used('a', 2, 0), used('a', 5, 1), used('b', 7, 2)];
    expect(await applyEvents(collection, firstUse, first), 'documents created').to.equal(2);
    expect(reads(), 'no read').to.equal(0);
    const a = await findStored(collection, { _id: 'a'.repeat(64) });
    expect(a?.amount).to.equal(2);
    expect(a?._v, 'the first event only: the second leaves it, as in a later chunk').to.equal(1);

    // A later event of a document already there, beside a new document: only the new one is written.
    expect(await applyEvents(collection, firstUse, [used('a', 9, 3), used('c', 4, 4)])).to.equal(1);
    const after = await findStored(collection, { _id: 'a'.repeat(64) });
    expect(after, 'left as it was').to.deep.equal(a);
    expect((await findStored(collection, { _id: 'c'.repeat(64) }))?.amount).to.equal(4);
    expect(reads() - 2, 'the checks above were the only reads').to.equal(2);
  });

  it('makes the same document whether a later event of it comes in the same chunk or the next, so a replay chunked otherwise matches', async () => {
    const live = handle.db.collection(`${firstUse.collection}_live`);
    const replayed = handle.db.collection(`${firstUse.collection}_replay`);
    const first = used('h', 3, 20);
    const copy = { ...first, position: { ...first.position, offset: '21' } }; // re-published: same event id
    const later = used('h', 6, 22);
    await applyEvents(live, firstUse, [first, copy, later]);
    await applyEvents(replayed, firstUse, [first]);
    await applyEvents(replayed, firstUse, [copy]);
    await applyEvents(replayed, firstUse, [later]);
    const id = { _id: 'h'.repeat(64) };
    expect(await findStored(replayed, id)).to.deep.equal(await findStored(live, id));
  });

  it('applies a redelivered chunk as nothing, without an error', async () => {
    const { collection } = counted();
    const chunk = [used('e', 3, 10), used('e', 6, 11), used('f', 8, 12)];
    expect(await applyEvents(collection, firstUse, chunk)).to.equal(2);
    const e = await findStored(collection, { _id: 'e'.repeat(64) });
    expect(await applyEvents(collection, firstUse, chunk), 'the same chunk again').to.equal(0);
    expect(await findStored(collection, { _id: 'e'.repeat(64) })).to.deep.equal(e);
    expect((await findStored(collection, { _id: 'f'.repeat(64) }))?.amount).to.equal(8);
  });

  it('still fails a chunk refused by another unique index, where nothing was written', async () => {
    const { collection } = counted();
    await collection.createIndex({ amount: 1 }, { unique: true, name: 'one_per_amount' });
    try {
      let failed: unknown;
      await applyEvents(collection, firstUse, [used('g', 1, 20)]);
      // 'g' holds amount 1 already: 'd' is refused as a duplicate, though no 'd' exists.
      await applyEvents(collection, firstUse, [used('d', 1, 21)]).catch((err: unknown) => {
        failed = err;
      });
      expect(failed, 'the chunk fails, for the runner to retry').to.not.equal(undefined);
      expect(await findStored(collection, { _id: 'd'.repeat(64) })).to.equal(null);
    } finally {
      await collection.dropIndex('one_per_amount');
    }
  });
});
