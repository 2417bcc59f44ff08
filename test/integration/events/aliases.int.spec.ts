import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { type CommandStartedEvent, MongoClient } from 'mongodb';
import { ALIASES, physicalName, swapIn } from '../../../events/collections.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';

/**
 * Where projections' logical names point (the alias documents a replay's swap writes on FerretDB),
 * on the local stack's database: resolved for every name with one read per interval, and followed
 * at once by the process that swaps.
 */
describe('projection aliases (integration)', () => {
  let client: MongoClient;
  let aliasReads = 0;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    const env = await useStack();
    client = new MongoClient(env.MONGODB_URI, { monitorCommands: true });
    client.on('commandStarted', (e: CommandStartedEvent) => {
      if (e.commandName === 'find' && e.command.find === ALIASES) aliasReads++;
    });
    await client.connect();
  });

  after(async () => {
    await client?.close();
  });

  /** A database of its own: the resolutions are cached per database name. */
  async function freshDb() {
    const db = client.db(`test_${randomUUID().slice(0, 8)}`);
    return db;
  }

  it('resolves every name of a database with one read, shared by concurrent callers', async () => {
    const db = await freshDb();
    try {
      await db.collection<{ _id: string; collection: string }>(ALIASES).insertOne({ _id: 'orders', collection: 'orders_r1' });
      const before = aliasReads;
      const names = await Promise.all(['orders', 'users', 'keys', 'orders'].map((n) => physicalName(db, n)));
      expect(names).to.deep.equal(['orders_r1', 'users', 'keys', 'orders_r1']);
      expect(await physicalName(db, 'usage'), 'a name with no alias is itself').to.equal('usage');
      expect(aliasReads - before, 'one read for all of them').to.equal(1);
    } finally {
      await db.dropDatabase();
    }
  });

  it('follows its own swap at once, and a fresh resolution reads what another process wrote', async () => {
    const db = await freshDb();
    try {
      await db.collection('ledger').insertOne({ _id: 'a' } as never);
      expect(await physicalName(db, 'ledger')).to.equal('ledger');
      await db.collection('ledger_r1').insertOne({ _id: 'b' } as never);
      const swap = await swapIn(db, 'ledger', 'ledger_r1');
      // MongoDB renames the shadow onto the name; FerretDB 1.x points an alias at it.
      const expected = swap.mode === 'alias' ? 'ledger_r1' : 'ledger';
      expect(await physicalName(db, 'ledger'), 'right after the swap').to.equal(expected);
      const found = await db.collection(await physicalName(db, 'ledger')).findOne({});
      expect(found?._id, 'the rebuilt documents').to.equal('b');
      if (swap.mode === 'alias') {
        await db
          .collection<{ _id: string; collection: string }>(ALIASES)
          .updateOne({ _id: 'ledger' }, { $set: { collection: 'ledger_r2' } });
        expect(await physicalName(db, 'ledger', { fresh: true }), "another process's swap, read afresh").to.equal('ledger_r2');
        expect(await physicalName(db, 'ledger'), 'and remembered').to.equal('ledger_r2');
      }
    } finally {
      await db.dropDatabase();
    }
  });
});
