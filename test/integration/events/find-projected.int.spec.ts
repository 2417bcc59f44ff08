import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { findProjected } from '../../../events/projection.ts';
import { connectMongo, type MongoHandle } from '../../../services/platform/mongo.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';

/** A made-up id with a NUL (a fuzzed URL's %00) finds nothing, instead of failing the database read (a 500). */
describe('findProjected with an id no document can have (integration)', () => {
  let mongo: MongoHandle;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    mongo = await connectMongo((await useStack()).MONGODB_URI, `test_${randomUUID().slice(0, 8)}`);
  });
  after(async () => {
    await mongo?.db.dropDatabase().catch(() => undefined);
    await mongo?.client.close();
  });

  it('answers null for an id holding a NUL, and finds a real one', async () => {
    const collection = mongo.db.collection('probe_docs');
    await collection.insertOne({ _id: 'real' as never, value: 1, _v: 1, _pos: [] });
    expect(await findProjected(collection, 'a\u0000b')).to.equal(null);
    expect(await findProjected(collection, '\u0000')).to.equal(null);
    expect(await findProjected<{ value: number }>(collection, 'real')).to.deep.include({ value: 1 });
  });
});
