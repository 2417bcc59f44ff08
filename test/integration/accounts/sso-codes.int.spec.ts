import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { CODE_TTL_MS, OneTimeCodes } from '../../../services/accounts/sso/one-time-codes.ts';
import { connectMongo, type MongoHandle } from '../../../services/platform/mongo.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';

/**
 * The single sign-on's one-time codes on the local stack's database (FerretDB): stored only hashed,
 * redeemed once even by two "processes" racing for it, and never after 60 seconds.
 */
describe('single sign-on one-time codes (integration)', () => {
  let one: MongoHandle;
  let two: MongoHandle;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    const env = await useStack();
    const dbName = `test_${randomUUID().slice(0, 8)}`;
    one = await connectMongo(env.MONGODB_URI, dbName);
    two = await connectMongo(env.MONGODB_URI, dbName);
    await new OneTimeCodes(one.db).ensureIndexes();
  });

  after(async () => {
    await one?.db.dropDatabase().catch(() => undefined);
    await one?.client.close();
    await two?.client.close();
  });

  it('keeps only a hash of the code, and redeems it for its account once', async () => {
    const codes = new OneTimeCodes(one.db);
    const code = await codes.issue('user-1');
    expect(code).to.match(/^[\w-]{43}$/);
    const stored = await one.db.collection('sso_codes').find({}).toArray();
    expect(JSON.stringify(stored)).not.to.include(code);
    expect(await codes.redeem(code)).to.equal('user-1');
    expect(await codes.redeem(code)).to.equal(null);
    expect(await codes.redeem('never-issued')).to.equal(null);
  });

  it('gives a code to one of two processes redeeming it at once', async () => {
    for (let round = 0; round < 10; round += 1) {
      const code = await new OneTimeCodes(one.db).issue(`user-${round}`);
      const results = await Promise.all([new OneTimeCodes(one.db).redeem(code), new OneTimeCodes(two.db).redeem(code)]);
      expect(
        results.filter((r) => r !== null),
        `round ${round}`,
      ).to.deep.equal([`user-${round}`]);
    }
  });

  it('refuses a code after 60 seconds, and the sweep drops it', async () => {
    const codes = new OneTimeCodes(one.db);
    const issuedAt = Date.now() - CODE_TTL_MS - 1;
    const late = await codes.issue('user-late', issuedAt);
    expect(await codes.redeem(late)).to.equal(null);
    const stale = await codes.issue('user-stale', issuedAt);
    await codes.sweep();
    expect(await one.db.collection('sso_codes').countDocuments({ userId: 'user-stale' })).to.equal(0);
    expect(await codes.redeem(stale)).to.equal(null);
  });
});
