import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { CODE_TTL_MS, OneTimeCodes, bindingHash } from '../../../services/accounts/sso/one-time-codes.ts';
import { connectMongo, type MongoHandle } from '../../../services/platform/mongo.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';

/**
 * The single sign-on's one-time codes on the local stack's database (FerretDB): stored only hashed,
 * redeemed once even by two "processes" racing for it, only by the browser the sign-on began in, and
 * never after 60 seconds.
 */
describe('single sign-on one-time codes (integration)', () => {
  let one: MongoHandle;
  let two: MongoHandle;
  const secret = 'browser-binding-secret';
  const bound = bindingHash(secret);

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
    const code = await codes.issue('user-1', bound);
    expect(code).to.match(/^[\w-]{43}$/);
    const stored = await one.db.collection('sso_codes').find({}).toArray();
    expect(JSON.stringify(stored)).not.to.include(code);
    expect(JSON.stringify(stored)).not.to.include(secret);
    expect(await codes.redeem(code, secret)).to.equal('user-1');
    expect(await codes.redeem(code, secret)).to.equal(null);
    expect(await codes.redeem('never-issued', secret)).to.equal(null);
  });

  it('opens nothing for another browser’s secret, and is used up by the attempt', async () => {
    const codes = new OneTimeCodes(one.db);
    const code = await codes.issue('user-2', bound);
    expect(await codes.redeem(code, 'another-browser')).to.equal(null);
    expect(await codes.redeem(code, secret)).to.equal(null);
  });

  it('gives a code to one of two processes redeeming it at once', async () => {
    for (let round = 0; round < 10; round += 1) {
      const code = await new OneTimeCodes(one.db).issue(`user-${round}`, bound);
      const results = await Promise.all([new OneTimeCodes(one.db).redeem(code, secret), new OneTimeCodes(two.db).redeem(code, secret)]);
      expect(
        results.filter((r) => r !== null),
        `round ${round}`,
      ).to.deep.equal([`user-${round}`]);
    }
  });

  it('keeps a link flow’s code and a sign-on’s apart: a link’s opens no session, a sign-on’s links nothing', async () => {
    const codes = new OneTimeCodes(one.db);
    const link = { issuer: 'https://idp', subject: 'v-1', subscriptionId: 'sub-1', tokenVersion: 0 };
    const linkCode = await codes.issue('user-v', bound, Date.now(), link);
    // The session exchange's redeem uses it up and opens nothing.
    expect(await codes.redeem(linkCode, secret)).to.equal(null);
    expect(await codes.redeemAny(linkCode, secret)).to.equal(null);
    const again = await codes.issue('user-v', bound, Date.now(), link);
    expect(await codes.redeemAny(again, secret)).to.deep.equal({ userId: 'user-v', link });
    const signOn = await codes.issue('user-v', bound);
    expect(await codes.redeemAny(signOn, secret)).to.deep.equal({ userId: 'user-v', link: null });
  });

  it('refuses a code after 60 seconds, and the sweep drops it', async () => {
    const codes = new OneTimeCodes(one.db);
    const issuedAt = Date.now() - CODE_TTL_MS - 1;
    const late = await codes.issue('user-late', bound, issuedAt);
    expect(await codes.redeem(late, secret)).to.equal(null);
    const stale = await codes.issue('user-stale', bound, issuedAt);
    await codes.sweep();
    expect(await one.db.collection('sso_codes').countDocuments({ userId: 'user-stale' })).to.equal(0);
    expect(await codes.redeem(stale, secret)).to.equal(null);
  });
});
