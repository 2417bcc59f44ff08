import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { MongoClient, type Collection, type Db, type Document } from 'mongodb';
import { appliedHere } from '../../../events/applied-here.ts';
import { newEvent, type DeliveredEvent } from '../../../events/envelope.ts';
import {
  appliedHereTo,
  applyEvents,
  findStored,
  ProjectionApplier,
  type Projection,
  type StoredDocument,
} from '../../../events/projection.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';

interface Total {
  total: number;
}

/**
 * Fewer reads where a document is new or this process applied the event already (issue 37), on the
 * local stack's database (FerretDB), reads counted by the driver's own command events: a document's
 * first event is inserted unread and falls back to a read when the document is there after all; an
 * event applied here is skipped unread by the projection's consumer, which waits for this process's
 * own write of it instead of racing it.
 */
describe('applying new documents and events applied here (integration)', () => {
  let client: MongoClient;
  let db: Db;
  let collection: Collection<Document>;
  let finds = 0;
  let offset = 0;
  const name = `totals_${randomUUID().slice(0, 8)}`;
  const totals: Projection<Total & Document> = {
    name: 'totals',
    collection: name,
    handles: ['usage.incremented'],
    documentId: (e) => String((e.data as { keyHash: string }).keyHash),
    evolve: (doc, e) => ({ total: (doc?.total ?? 0) + (e.data as { amount: number }).amount }),
    createdBy: ['usage.incremented'],
  };
  const used = (key: string, amount: number): DeliveredEvent =>
    ({
      ...newEvent('usage.incremented', { keyHash: key.repeat(64), metric: 'queries', amount, period: '2026-12' }),
      position: { topic: 'usage.events', partition: 0, offset: String(offset++) },
    }) as DeliveredEvent;
  const stored = async (key: string) => (await findStored(collection, { _id: key.repeat(64) })) as StoredDocument<Total> | null;
  /** The reads of the test's collection a step made. */
  async function readsOf(step: () => Promise<unknown>): Promise<number> {
    const before = finds;
    await step();
    return finds - before;
  }

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    const env = await useStack();
    client = new MongoClient(env.MONGODB_URI, { monitorCommands: true });
    client.on('commandStarted', (e) => {
      if (e.commandName === 'find' && (e.command as { find?: string }).find === name) finds++;
    });
    await client.connect();
    db = client.db(`test_${randomUUID().slice(0, 8)}`);
    collection = db.collection(name);
  });

  after(async () => {
    await db?.dropDatabase().catch(() => undefined);
    await client?.close();
  });

  // Each case stands for another process unless it says otherwise: nothing this one applied before counts.
  beforeEach(() => appliedHere.forget());

  it('inserts the document a createdBy event starts without reading it', async () => {
    expect(await readsOf(() => applyEvents(collection, totals, [used('a', 3)]))).to.equal(0);
    const doc = await stored('a');
    expect(doc?.total).to.equal(3);
    expect(doc?._v).to.equal(1);
  });

  it('reads and applies afresh when the document is there after all, and skips a redelivery', async () => {
    const first = used('b', 2);
    await applyEvents(collection, totals, [first]);
    appliedHere.forget();
    expect(await readsOf(() => applyEvents(collection, totals, [used('b', 5)])), 'the insert refused, then a read').to.equal(1);
    expect((await stored('b'))?.total).to.equal(7);
    appliedHere.forget();
    await applyEvents(collection, totals, [first]);
    const doc = await stored('b');
    expect(doc?.total, 'a redelivery changes nothing').to.equal(7);
    expect(doc?._v).to.equal(2);
  });

  it('skips, unread, an event this process applied, and still reads for one it did not', async () => {
    const mine = used('c', 4);
    await applyEvents(collection, totals, [mine]);
    const applier = new ProjectionApplier(db, totals);
    expect(await readsOf(() => applier.handle([mine])), 'applied here').to.equal(0);
    const theirs = used('c', 1);
    expect(await readsOf(() => applier.handle([theirs])), 'not applied here').to.equal(1);
    const doc = await stored('c');
    expect(doc?.total).to.equal(5);
    expect(doc?._v).to.equal(2);
  });

  it("waits for this process's own write of an event instead of racing it, then skips it unread", async () => {
    await applyEvents(collection, totals, [used('d', 1)]);
    appliedHere.forget();
    const mine = used('d', 10);
    const applier = new ProjectionApplier(db, totals);
    // The service marks its event before publishing it; its consumer has the event at once.
    const done = appliedHere.applying(totals.collection, [mine]);
    const before = finds;
    const consumer = applier.handle([mine]);
    // The service's write: one read of its own here (a service passes the one it made to decide).
    await applyEvents(collection, totals, [mine]);
    done();
    await consumer;
    expect(finds - before, "the service's read only").to.equal(1);
    const doc = await stored('d');
    expect(doc?.total).to.equal(11);
    expect(doc?._v).to.equal(2);
  });

  it('tells a reader that must see an event applied (the mailer) that this process applied it, after waiting for the write', async () => {
    const mine = used('e', 2);
    const done = appliedHere.applying(totals.collection, [mine]);
    const answer = appliedHereTo(db, totals, 'e'.repeat(64), mine);
    await applyEvents(collection, totals, [mine]);
    done();
    expect(await answer).to.equal(true);
    expect((await stored('e'))?.total, 'and it is there').to.equal(2);
    expect(await appliedHereTo(db, totals, 'e'.repeat(64), used('e', 1)), 'an event it did not apply').to.equal(false);
    expect(await appliedHereTo(db, totals, 'f'.repeat(64), mine), 'another document').to.equal(false);
  });
});
