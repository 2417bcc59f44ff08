import { createHash } from 'node:crypto';
import { expect } from 'chai';
import type { Db } from 'mongodb';
import { pino } from 'pino';
import { shardOf, VERIFICATION_SHARDS, VerificationCounts } from '../../../services/keys/verifications.ts';

interface Update {
  updateOne: { filter: { _id: string }; update: { $inc: Record<string, number> } };
}

/** A collection that records the bulk writes it is given and fails the ones it is told to: the flush's control flow, no database. */
function collectionThatFails(failures: number) {
  const written = new Map<string, Record<string, number>>();
  let left = failures;
  let statements = 0;
  const collection = {
    bulkWrite: async (ops: Update[]) => {
      if (left-- > 0) throw new Error('database unreachable');
      statements += ops.length;
      for (const { updateOne } of ops) {
        const doc = written.get(updateOne.filter._id) ?? {};
        for (const [field, n] of Object.entries(updateOne.update.$inc)) doc[field] = (doc[field] ?? 0) + n;
        written.set(updateOne.filter._id, doc);
      }
      return {};
    },
  };
  const db = { collection: () => collection } as unknown as Db;
  return { db, written, statements: () => statements };
}

/** What the written documents hold for one key on one day, summed over the writer's shard document. */
const countsOf = (written: Map<string, Record<string, number>>, keyHash: string, day: string, writer = 'w') => {
  const doc = written.get(`${day}:${writer}:${shardOf(keyHash)}`) ?? {};
  const prefix = `keys.${keyHash}.outcomes.`;
  return Object.fromEntries(
    Object.entries(doc).flatMap(([field, n]) => (field.startsWith(prefix) ? [[field.slice(prefix.length), n]] : [])),
  );
};

describe('verification counts: flushing through failures (unit)', () => {
  const log = pino({ level: 'silent' });
  const day = Date.parse('2026-11-26T12:00:00Z');

  it('keeps what a failed flush could not write, and the next flush writes it once, beside what came since', async () => {
    const { db, written } = collectionThatFails(3);
    const counts = new VerificationCounts(db, { writer: 'w', log });
    for (let flush = 0; flush < 3; flush++) {
      counts.note('k1', 's1', 'VALID', day);
      counts.note('k2', 's2', 'RATE_LIMITED', day);
      await counts.flush().then(
        () => expect.fail('the collection was failing'),
        (err: Error) => expect(err.message).to.equal('database unreachable'),
      );
    }
    counts.note('k1', 's1', 'VALID', day);
    // A failed flush does not stop the ones after it.
    await counts.flush();
    expect(countsOf(written, 'k1', '2026-11-26')).to.deep.equal({ VALID: 4 });
    expect(countsOf(written, 'k2', '2026-11-26')).to.deep.equal({ RATE_LIMITED: 3 });
    await counts.flush();
    expect(countsOf(written, 'k1', '2026-11-26'), 'nothing written twice').to.deep.equal({ VALID: 4 });
  });

  it('writes what came since the last flush only, and nothing for a key idle since (its entry is kept, then dropped)', async () => {
    const { db, written, statements } = collectionThatFails(0);
    const counts = new VerificationCounts(db, { writer: 'w', log });
    counts.note('k1', 's1', 'VALID', day);
    counts.note('k1', 's1', 'VALID', day);
    await counts.flush();
    expect(statements()).to.equal(1);
    counts.note('k1', 's1', 'VALID', day);
    counts.note('k1', 's1', 'USAGE_EXCEEDED', day);
    await counts.flush();
    expect(statements()).to.equal(2);
    expect(countsOf(written, 'k1', '2026-11-26')).to.deep.equal({ VALID: 3, USAGE_EXCEEDED: 1 });
    await counts.flush();
    await counts.flush();
    expect(statements(), 'an idle key costs no statement').to.equal(2);
    counts.note('k1', 's1', 'VALID', day);
    await counts.flush();
    expect(countsOf(written, 'k1', '2026-11-26')).to.deep.equal({ VALID: 4, USAGE_EXCEEDED: 1 });
  });

  it('writes a day that has turned under its own date', async () => {
    const { db, written } = collectionThatFails(0);
    const counts = new VerificationCounts(db, { writer: 'w', log });
    counts.note('k1', 's1', 'VALID', Date.parse('2026-11-25T23:59:59.999Z'));
    counts.note('k1', 's1', 'EXPIRED', Date.parse('2026-11-26T00:00:00Z'));
    await counts.flush();
    expect(countsOf(written, 'k1', '2026-11-25')).to.deep.equal({ VALID: 1 });
    expect(countsOf(written, 'k1', '2026-11-26')).to.deep.equal({ EXPIRED: 1 });
  });

  it('writes a flush of any number of keys in at most one statement per shard document (issue 37)', async () => {
    const { db, written, statements } = collectionThatFails(0);
    const counts = new VerificationCounts(db, { writer: 'w', log });
    // bench:validate's default: 444 keys used in one flush interval.
    const keys = Array.from({ length: 444 }, (_, i) => createHash('sha256').update(String(i)).digest('hex'));
    for (const k of keys) {
      counts.note(k, 'sub', 'VALID', day);
      counts.note(k, 'sub', 'VALID', day);
      counts.note(k, 'sub', 'RATE_LIMITED', day);
    }
    await counts.flush();
    expect(statements()).to.be.at.most(VERIFICATION_SHARDS);
    for (const k of keys) expect(countsOf(written, k, '2026-11-26')).to.deep.equal({ VALID: 2, RATE_LIMITED: 1 });
  });

  it('spreads key hashes over every shard, none holding more than twice its share', () => {
    const perShard = new Array<number>(VERIFICATION_SHARDS).fill(0);
    const n = 64 * VERIFICATION_SHARDS;
    for (let i = 0; i < n; i++) perShard[shardOf(createHash('sha256').update(`k${i}`).digest('hex'))]! += 1;
    expect(Math.min(...perShard)).to.be.above(0);
    expect(Math.max(...perShard)).to.be.at.most((2 * n) / VERIFICATION_SHARDS);
  });
});
