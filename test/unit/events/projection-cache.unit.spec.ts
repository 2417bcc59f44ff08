import { expect } from 'chai';
import type { Document } from 'mongodb';
import { newEvent, type DeliveredEvent } from '../../../events/envelope.ts';
import { ProjectionCache } from '../../../events/projection-cache.ts';
import { applyStored, type StoredDocument } from '../../../events/projection.ts';
import { countsOf, usageDocumentId, usageProjection, type UsageDocument } from '../../../services/keys/usage.ts';

const TOPIC = 'usage.events';
const keyHash = 'a'.repeat(64);
const period = '2026-11';
const id = usageDocumentId(keyHash, period);

function used(amount: number, offset: number, eventId?: string): DeliveredEvent {
  const e = newEvent('usage.incremented', { keyHash, metric: 'queries', amount, period }, eventId ? { eventId } : {});
  return { ...e, position: { topic: TOPIC, partition: 0, offset: String(offset) } } as DeliveredEvent;
}

/** The document the database would hold after the projection runner applied these events. */
const stored = (events: readonly DeliveredEvent[]): StoredDocument<Document> | null =>
  events.reduce<StoredDocument<Document> | null>((doc, e) => applyStored(usageProjection, id, doc, e), null);

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

/** A load that counts its calls and answers what the "database" holds at that moment. */
function loader(db: { doc: StoredDocument<Document> | null }) {
  const calls = { n: 0 };
  return { calls, load: async (_id: string) => (calls.n++, db.doc) };
}

describe('ProjectionCache: a projection followed in memory (unit)', () => {
  it("serves a loaded document from memory and applies the feed's events as the projection does, redeliveries and re-publishes once", async () => {
    const t = clock();
    const first = used(1, 0);
    const db = { doc: stored([first]) };
    const { calls, load } = loader(db);
    const cache = new ProjectionCache<UsageDocument>(usageProjection, [TOPIC], { load, now: t.now });
    cache.setLive(true);
    cache.projectionCommitted([{ topic: TOPIC, partition: 0, offset: 1n }]);
    expect(countsOf(await cache.get(id)).queries).to.equal(1);

    const second = used(2, 1);
    const third = used(4, 2, 'evt-third');
    cache.apply([second, third]);
    cache.apply([second]); // redelivered after a rebalance
    const republished = used(4, 3, 'evt-third'); // the same event published twice (outbox relay)
    const fourth = used(8, 4);
    cache.apply([republished]);
    cache.apply([fourth]);
    t.advance(10_000);
    const doc = await cache.get(id);
    expect(calls.n, 'served from memory').to.equal(1);
    expect(countsOf(doc).queries).to.equal(1 + 2 + 4 + 8);
    const projected = stored([first, second, third, second, republished, fourth]);
    expect(cache.peek(id)).to.deep.equal(projected);
  });

  it('keeps "no document" and builds it from its first event', async () => {
    const { calls, load } = loader({ doc: null });
    const cache = new ProjectionCache<UsageDocument>(usageProjection, [TOPIC], { load });
    cache.setLive(true);
    expect(await cache.get(id)).to.equal(null);
    cache.apply([used(3, 0)]);
    expect(countsOf(await cache.get(id)).queries).to.equal(3);
    expect(calls.n).to.equal(1);
  });

  it('applies events handled while a load is in flight to what it loaded, once', async () => {
    for (const dbHasIt of [false, true]) {
      let answer!: (doc: StoredDocument<Document> | null) => void;
      const cache = new ProjectionCache<UsageDocument>(usageProjection, [TOPIC], {
        load: () => new Promise((resolve) => (answer = resolve)),
      });
      cache.setLive(true);
      const first = used(1, 0);
      const second = used(2, 1);
      const pending = cache.get(id);
      cache.apply([second]); // the feed is ahead of the read
      answer(stored(dbHasIt ? [first, second] : [first]));
      expect(countsOf(await pending).queries, dbHasIt ? 'already in the database' : 'not yet in the database').to.equal(3);
    }
  });

  it('keeps an entry long only if it was loaded while live and with the projection past what the feed handled', async () => {
    const t = clock();
    const { calls, load } = loader({ doc: stored([used(1, 0)]) });
    // random 1: refreshed at nine tenths of the lifetime, after this test's reads.
    const cache = new ProjectionCache<UsageDocument>(usageProjection, [TOPIC], {
      load,
      now: t.now,
      random: () => 1,
      trustedTtlMs: 30_000,
      untrustedTtlMs: 500,
    });
    const readAfter = async (ms: number) => {
      t.advance(ms);
      await cache.get(id);
      return calls.n;
    };
    cache.feedStartsAt([{ topic: TOPIC, partition: 0, offset: 6n }]); // events 0..5 come only from the database

    await cache.get(id); // not live yet
    expect(await readAfter(499)).to.equal(1);
    expect(await readAfter(1), 'short lifetime before the feed is live').to.equal(2);

    cache.setLive(true);
    cache.projectionCommitted([{ topic: TOPIC, partition: 0, offset: 5n }]); // the projection has not applied offset 5
    expect(await readAfter(500), 'projection behind the feed: short lifetime').to.equal(3);
    expect(await readAfter(500)).to.equal(4);

    cache.projectionCommitted([{ topic: TOPIC, partition: 0, offset: 6n }]);
    expect(await readAfter(500), 'in step now: this load is trusted').to.equal(5);
    expect(await readAfter(23_000), 'long lifetime').to.equal(5);

    cache.apply([used(1, 6)]); // the feed moves ahead of the projection again: held entries stay, events keep them current
    expect(await readAfter(500)).to.equal(5);
    cache.setLive(false); // the feed crashed: everything falls back to the short lifetime
    expect(await readAfter(1), 'the entry is older than the short lifetime').to.equal(6);
    expect(countsOf(await cache.get(id)).queries, 'from the database again').to.equal(1);
  });

  it('reloads a trusted entry in the background before the end of its lifetime, serving it meanwhile', async () => {
    const t = clock();
    let answer: ((doc: StoredDocument<Document> | null) => void) | undefined;
    let calls = 0;
    const db = { doc: stored([used(1, 0)]) };
    const load = (_id: string) => {
      calls++;
      return calls === 1 ? Promise.resolve(db.doc) : new Promise<StoredDocument<Document> | null>((resolve) => (answer = resolve));
    };
    // random 0.75: refreshed at 0.5 + 0.4 * 0.75 = 80 % of the lifetime.
    const cache = new ProjectionCache<UsageDocument>(usageProjection, [TOPIC], {
      load,
      now: t.now,
      random: () => 0.75,
      trustedTtlMs: 10_000,
    });
    cache.setLive(true);
    expect(countsOf(await cache.get(id)).queries).to.equal(1);
    t.advance(7_999);
    expect(cache.peekView(id)).to.not.equal(undefined);
    expect(calls, 'before 80 % of the lifetime').to.equal(1);
    t.advance(1);
    expect(countsOf(cache.peekView(id) ?? null).queries, 'served while it reloads').to.equal(1);
    expect(cache.peekView(id)).to.not.equal(undefined);
    expect(calls, 'one reload, however many reads').to.equal(2);
    answer!(stored([used(1, 0), used(5, 1)]));
    await new Promise((resolve) => setImmediate(resolve));
    t.advance(7_999);
    expect(countsOf(cache.peekView(id) ?? null).queries, 'the reloaded document, with a fresh lifetime').to.equal(6);
    expect(calls).to.equal(2);
  });

  it('keeps the document and view it holds when a reload finds the same document, and takes a changed one (issue 37)', async () => {
    const t = clock();
    // A copy per load, as the database driver makes one per read.
    const db = { doc: stored([used(1, 0)]) };
    const load = async (_id: string) => structuredClone(db.doc);
    const cache = new ProjectionCache<UsageDocument>(usageProjection, [TOPIC], { load, now: t.now, random: () => 0, trustedTtlMs: 10_000 });
    cache.setLive(true);
    await cache.get(id);
    const first = cache.peekView(id);
    expect(countsOf(first ?? null).queries).to.equal(1);
    // random 0: refreshed at half the lifetime.
    t.advance(5_000);
    expect(cache.peekView(id), 'served while it reloads').to.equal(first);
    await new Promise((resolve) => setImmediate(resolve));
    expect(cache.peekView(id), 'the same objects, after the reload').to.equal(first);
    db.doc = stored([used(1, 0), used(2, 1)]);
    t.advance(5_000);
    expect(cache.peekView(id), 'the reload was a fresh lifetime: due again only now').to.equal(first);
    await new Promise((resolve) => setImmediate(resolve));
    const changed = cache.peekView(id);
    expect(changed).to.not.equal(first);
    expect(countsOf(changed ?? null).queries).to.equal(3);
  });

  it('refreshes the entries that come due together in one batched read, keeping the events handled meanwhile (issue 37)', async () => {
    const t = clock();
    const ids = Array.from({ length: 10 }, (_, i) => usageDocumentId(String(i).repeat(64).slice(0, 64), period));
    const usedBy = (docId: string, amount: number, offset: number): DeliveredEvent => {
      const e = newEvent('usage.incremented', { keyHash: docId.split(':')[0]!, metric: 'queries', amount, period });
      return { ...e, position: { topic: TOPIC, partition: 0, offset: String(offset) } } as DeliveredEvent;
    };
    const db = new Map(ids.map((docId, i) => [docId, applyStored(usageProjection, docId, null, usedBy(docId, 1, i))!]));
    let singles = 0;
    const batches: string[][] = [];
    let answer: (() => void) | undefined;
    const cache = new ProjectionCache<UsageDocument>(usageProjection, [TOPIC], {
      load: async (docId) => (singles++, db.get(docId) ?? null),
      loadMany: (wanted) => {
        batches.push([...wanted]);
        // What the database holds when the read is answered, not when it was asked.
        return new Promise((resolve) => (answer = () => resolve(wanted.flatMap((w) => db.get(w) ?? []))));
      },
      refreshBatchMs: 5,
      now: t.now,
      random: () => 0, // refreshed from half the lifetime on
      trustedTtlMs: 10_000,
    });
    cache.setLive(true);
    for (const docId of ids) await cache.get(docId);
    expect(singles).to.equal(10);
    t.advance(5_000);
    for (const docId of ids) expect(countsOf(cache.peekView(docId) ?? null).queries, 'served while it reloads').to.equal(1);
    for (const docId of ids) cache.peekView(docId); // read again while queued: not queued twice
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(batches, 'one read for the ten').to.deep.equal([ids]);
    expect(singles, 'none read alone').to.equal(10);
    // An event the feed handles while the batched read is out (and the projection applies meanwhile).
    const late = usedBy(ids[3]!, 5, 100);
    cache.apply([late]);
    answer!();
    await new Promise((resolve) => setImmediate(resolve));
    expect(countsOf(cache.peekView(ids[3]!) ?? null).queries, 'the reloaded document plus the event').to.equal(6);
    t.advance(4_999);
    expect(countsOf(cache.peekView(ids[0]!) ?? null).queries, 'a fresh lifetime').to.equal(1);
    expect(batches).to.have.length(1);
  });

  it('serves a trusted entry nobody read for a lifetime once more while it reloads, up to the stale limit; an older one is read through', async () => {
    const t = clock();
    const { calls, load } = loader({ doc: stored([used(1, 0)]) });
    const cache = new ProjectionCache<UsageDocument>(usageProjection, [TOPIC], {
      load,
      now: t.now,
      random: () => 1,
      trustedTtlMs: 10_000,
      trustedStaleMs: 50_000,
    });
    cache.setLive(true);
    await cache.get(id);
    expect(calls.n).to.equal(1);
    t.advance(30_000); // idle three lifetimes
    expect(cache.peekView(id), 'served, not a miss').to.not.equal(undefined);
    expect(calls.n, 'reloading in the background').to.equal(2);
    await new Promise((resolve) => setImmediate(resolve));
    t.advance(9_999);
    expect(cache.peekView(id), 'the reload gave it a fresh lifetime').to.not.equal(undefined);
    t.advance(50_001 - 9_999);
    expect(cache.peekView(id), 'past the stale limit: not served').to.equal(undefined);
    cache.setLive(false);
    await cache.get(id);
    t.advance(10_001);
    expect(cache.peekView(id), 'not trusted (feed not live): no stale serving').to.equal(undefined);
  });

  it('shares one load between concurrent misses of one id', async () => {
    const { calls, load } = loader({ doc: stored([used(2, 0)]) });
    const cache = new ProjectionCache<UsageDocument>(usageProjection, [TOPIC], { load });
    const docs = await Promise.all([cache.get(id), cache.get(id), cache.get(id)]);
    expect(docs.map((d) => countsOf(d).queries)).to.deep.equal([2, 2, 2]);
    expect(calls.n).to.equal(1);
  });
});
