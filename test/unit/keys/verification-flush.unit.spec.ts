import { expect } from 'chai';
import type { Db } from 'mongodb';
import { pino } from 'pino';
import { VerificationCounts } from '../../../services/keys/verifications.ts';

interface Update {
  updateOne: { filter: { _id: string }; update: { $inc: Record<string, number> } };
}

/** A collection that records the bulk writes it is given and fails the ones it is told to: the flush's control flow, no database. */
function collectionThatFails(failures: number) {
  const written = new Map<string, Record<string, number>>();
  let left = failures;
  const collection = {
    bulkWrite: async (ops: Update[]) => {
      if (left-- > 0) throw new Error('database unreachable');
      for (const { updateOne } of ops) {
        const doc = written.get(updateOne.filter._id) ?? {};
        for (const [field, n] of Object.entries(updateOne.update.$inc)) doc[field] = (doc[field] ?? 0) + n;
        written.set(updateOne.filter._id, doc);
      }
      return {};
    },
  };
  const db = { collection: () => collection } as unknown as Db;
  return { db, written };
}

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
    expect(written.get('k1:2026-11-26:w')).to.deep.equal({ 'outcomes.VALID': 4 });
    expect(written.get('k2:2026-11-26:w')).to.deep.equal({ 'outcomes.RATE_LIMITED': 3 });
    await counts.flush();
    expect(written.get('k1:2026-11-26:w'), 'nothing written twice').to.deep.equal({ 'outcomes.VALID': 4 });
  });

  it('writes a day that has turned under its own date', async () => {
    const { db, written } = collectionThatFails(0);
    const counts = new VerificationCounts(db, { writer: 'w', log });
    counts.note('k1', 's1', 'VALID', Date.parse('2026-11-25T23:59:59.999Z'));
    counts.note('k1', 's1', 'EXPIRED', Date.parse('2026-11-26T00:00:00Z'));
    await counts.flush();
    expect(written.get('k1:2026-11-25:w')).to.deep.equal({ 'outcomes.VALID': 1 });
    expect(written.get('k1:2026-11-26:w')).to.deep.equal({ 'outcomes.EXPIRED': 1 });
  });
});
