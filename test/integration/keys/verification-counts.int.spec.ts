import { randomBytes, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { pino } from 'pino';
import { VERIFICATION_SHARDS, VerificationCounts } from '../../../services/keys/verifications.ts';
import { connectMongo, type MongoHandle } from '../../../services/platform/mongo.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';

const keyHash = (): string => randomBytes(32).toString('hex');

describe('verification counts in MongoDB (integration)', () => {
  // Two "processes": separate clients and writers, as two replicas of the keys service.
  let one: MongoHandle;
  let two: MongoHandle;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    const env = await useStack();
    const dbName = `test_${randomUUID().slice(0, 8)}`;
    one = await connectMongo(env.MONGODB_URI, dbName);
    two = await connectMongo(env.MONGODB_URI, dbName);
  });

  after(async () => {
    await one?.db.dropDatabase().catch(() => undefined);
    await one?.client.close();
    await two?.client.close();
  });

  it('sums what two writers counted per key, day and outcome, over flushes of more keys than one bulk command holds', async () => {
    const log = pino({ level: 'silent' });
    const a = new VerificationCounts(one.db, { writer: 'a', log });
    const b = new VerificationCounts(two.db, { writer: 'b', log });
    await a.ensureIndexes();
    // 120 keys, flushed twice: the second flush updates existing documents, the case in which a
    // single command of that many statements hung the MongoDB-wire server.
    const keys = Array.from({ length: 120 }, keyHash);
    const day1 = Date.parse('2026-11-24T23:59:59Z');
    const day2 = Date.parse('2026-11-25T00:00:01Z');
    for (let round = 0; round < 2; round++) {
      for (const k of keys) {
        a.note(k, 'sub-1', 'VALID', day1);
        b.note(k, 'sub-1', 'RATE_LIMITED', day1);
      }
      await Promise.all([a.flush(), b.flush()]);
    }
    a.note(keys[0]!, 'sub-1', 'EXPIRED', day2);
    a.note(keys[0]!, 'sub-1', 'EXPIRED', day2);
    await a.stop();
    await b.stop();

    const counts = await a.read(keys[0]!, new Date('2026-11-01T00:00:00Z'));
    expect(counts).to.deep.equal([
      { day: '2026-11-24', outcomes: { VALID: 2, RATE_LIMITED: 2, USAGE_EXCEEDED: 0, DISABLED: 0, EXPIRED: 0 } },
      { day: '2026-11-25', outcomes: { VALID: 0, RATE_LIMITED: 0, USAGE_EXCEEDED: 0, DISABLED: 0, EXPIRED: 2 } },
    ]);
    expect(await b.read(keys[119]!, new Date('2026-11-25T00:00:00Z')), 'from the day asked on').to.deep.equal([]);
    // A writer's day is its shard documents, not one per key (issue 37): 120 keys, two writers.
    const stored = await one.db.collection('key_verifications').countDocuments({});
    expect(stored).to.be.at.most(2 * VERIFICATION_SHARDS + 1);
    for (const k of keys) {
      expect(await b.read(k, new Date('2026-11-24T00:00:00Z'))).to.deep.equal([
        { day: '2026-11-24', outcomes: { VALID: 2, RATE_LIMITED: 2, USAGE_EXCEEDED: 0, DISABLED: 0, EXPIRED: 0 } },
        ...(k === keys[0]
          ? [{ day: '2026-11-25', outcomes: { VALID: 0, RATE_LIMITED: 0, USAGE_EXCEEDED: 0, DISABLED: 0, EXPIRED: 2 } }]
          : []),
      ]);
    }
  });

  it('still reads and adds the documents of the earlier form, one per key, day and writer', async () => {
    const log = pino({ level: 'silent' });
    const counts = new VerificationCounts(one.db, { writer: 'c', log });
    const k = keyHash();
    // As a process before issue 37 wrote it: one document per key, day and writer.
    await one.db
      .collection<{ _id: string; keyHash: string; subscriptionId: string; day: string; writer: string; outcomes: Record<string, number> }>(
        'key_verifications',
      )
      .insertOne({
        _id: `${k}:2026-11-20:old`,
        keyHash: k,
        subscriptionId: 'sub-2',
        day: '2026-11-20',
        writer: 'old',
        outcomes: { VALID: 5, DISABLED: 1 },
      });
    counts.note(k, 'sub-2', 'VALID', Date.parse('2026-11-20T10:00:00Z'));
    await counts.stop();
    expect(await counts.read(k, new Date('2026-11-01T00:00:00Z'))).to.deep.equal([
      { day: '2026-11-20', outcomes: { VALID: 6, RATE_LIMITED: 0, USAGE_EXCEEDED: 0, DISABLED: 1, EXPIRED: 0 } },
    ]);
  });
});
