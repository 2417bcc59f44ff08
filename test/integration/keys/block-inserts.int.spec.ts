import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { MongoClient, type Collection } from 'mongodb';
import { BlockInserts } from '../../../services/keys/block-inserts.ts';
import { connectMongo, type MongoHandle } from '../../../services/platform/mongo.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';

interface Doc {
  _id: string;
  n: number;
}

describe('rate-limit block claims gathered into one insert (integration)', () => {
  let mongo: MongoHandle;
  let dbName: string;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    const env = await useStack();
    dbName = `test_${randomUUID().slice(0, 8)}`;
    mongo = await connectMongo(env.MONGODB_URI, dbName);
  });

  after(async () => {
    await mongo?.db.dropDatabase().catch(() => undefined);
    await mongo?.client.close();
  });

  const fresh = (): Collection<Doc> => mongo.db.collection<Doc>(`bi_${randomUUID().slice(0, 8)}`);

  it('tells each claim whether it went in: a taken _id is false, the others of the same command true and stored', async () => {
    const monitored = new MongoClient((await useStack()).MONGODB_URI, { monitorCommands: true });
    const blocks = monitored.db(dbName).collection<Doc>(`bi_${randomUUID().slice(0, 8)}`);
    await blocks.insertOne({ _id: 'k#1#1', n: 0 });
    const inserts = new BlockInserts(blocks);
    let commands = 0;
    monitored.on('commandStarted', (e) => void (e.commandName === 'insert' && (commands += 1)));
    try {
      // Queued in one turn of the event loop: one command.
      const results = await Promise.all([
        inserts.insert({ _id: 'k#1#0', n: 1 }, false),
        inserts.insert({ _id: 'k#1#1', n: 1 }, true),
        inserts.insert({ _id: 'k#1#2', n: 1 }, false),
      ]);
      expect(results).to.deep.equal([true, false, true]);
      expect(commands, 'one insert command for the three').to.equal(1);
    } finally {
      await monitored.close();
    }
    const stored = await mongo.db.collection<Doc>(blocks.collectionName).find({}).sort({ _id: 1 }).toArray();
    expect(stored.map((d) => [d._id, d.n])).to.deep.equal([
      ['k#1#0', 1],
      ['k#1#1', 0],
      ['k#1#2', 1],
    ]);
  });

  it('sends a claim made ahead after its wait, and at once when a request comes to wait on it', async () => {
    const blocks = fresh();
    const inserts = new BlockInserts(blocks, { backgroundMs: 60_000 });
    const ahead = inserts.insert({ _id: 'k#2#0', n: 1 }, false);
    await new Promise((resolve) => setImmediate(resolve));
    expect(await blocks.countDocuments({}), 'still waiting for company').to.equal(0);
    inserts.hurry();
    expect(await ahead).to.equal(true);
    expect(await blocks.countDocuments({ _id: 'k#2#0' })).to.equal(1);
  });

  it('rejects every claim of a command the database could not run, so none is taken for granted', async () => {
    const client = (await connectMongo((await useStack()).MONGODB_URI, dbName)).client;
    const blocks = client.db(dbName).collection<Doc>(`bi_${randomUUID().slice(0, 8)}`);
    await client.close();
    const inserts = new BlockInserts(blocks);
    const results = await Promise.allSettled([inserts.insert({ _id: 'a', n: 1 }, true), inserts.insert({ _id: 'b', n: 1 }, true)]);
    expect(results.map((r) => r.status)).to.deep.equal(['rejected', 'rejected']);
  });
});
