import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { LoginLimiter } from '../../../services/accounts/login-limiter.ts';
import { ACCOUNT_LIMITS_COLLECTION, SharedLimits } from '../../../services/accounts/shared-limits.ts';
import { SignupLimiter } from '../../../services/accounts/signup-limiter.ts';
import { HttpError } from '../../../services/platform/http/errors.ts';
import { connectMongo, type MongoHandle } from '../../../services/platform/mongo.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';

/**
 * The log-in and sign-up limits on the local stack's database (FerretDB): two limiter objects on two
 * connections stand for two replicas (the spawned-process version is limits-across-processes.int.spec.ts).
 */
describe('login and sign-up limits, shared through the database (integration)', () => {
  let uri: string;
  let dbName: string;
  let one: MongoHandle;
  let two: MongoHandle;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    uri = (await useStack()).MONGODB_URI;
    dbName = `test_${randomUUID().slice(0, 8)}`;
    one = await connectMongo(uri, dbName);
    two = await connectMongo(uri, dbName);
    await new SharedLimits(one.db).ensureIndexes();
  });

  after(async () => {
    await one?.db.dropDatabase().catch(() => undefined);
    await one?.client.close();
    await two?.client.close();
  });

  const budget = (perEmail: number) => ({ perIpPerMinute: 1000, failuresPerEmailPer15Min: perEmail });

  it("admits exactly the e-mail's limit of concurrent attempts across two replicas, before any password is checked", async () => {
    const a = new LoginLimiter(new SharedLimits(one.db), budget(10));
    const b = new LoginLimiter(new SharedLimits(two.db), budget(10));
    const outcomes = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).attempt(`198.51.100.${i}`, 'target@example.test')),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).to.have.length(10);
    for (const o of outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected')) {
      expect(o.reason).to.be.instanceOf(HttpError);
      expect(o.reason).to.include({ status: 429, code: 'RATE_LIMITED' });
      expect(Number((o.reason as HttpError).headers['Retry-After'])).to.be.greaterThan(0);
    }
    // The counts name the e-mail by a hash only.
    const stored = JSON.stringify(await one.db.collection(ACCOUNT_LIMITS_COLLECTION).find({}).toArray());
    expect(stored).not.to.include('target@example.test');
  });

  it('gives the attempts back on success, for every replica', async () => {
    const a = new LoginLimiter(new SharedLimits(one.db), budget(2));
    const b = new LoginLimiter(new SharedLimits(two.db), budget(2));
    await a.attempt('192.0.2.1', 'back@example.test');
    await b.attempt('192.0.2.1', 'back@example.test');
    await b.succeeded('back@example.test');
    await a.attempt('192.0.2.1', 'back@example.test');
    await b.attempt('192.0.2.1', 'back@example.test');
    const third = await a.attempt('192.0.2.1', 'back@example.test').then(
      () => null,
      (err: unknown) => err,
    );
    expect(third).to.include({ status: 429 });
  });

  it('counts sign-ups per address across replicas', async () => {
    const a = new SignupLimiter(new SharedLimits(one.db), { perIpPerHour: 3, perMinute: 1000 });
    const b = new SignupLimiter(new SharedLimits(two.db), { perIpPerHour: 3, perMinute: 1000 });
    await a.admit('203.0.113.7');
    await b.admit('203.0.113.7');
    await a.admit('203.0.113.7');
    const fourth = await b.admit('203.0.113.7').then(
      () => null,
      (err: unknown) => err,
    );
    expect(fourth).to.include({ status: 429, code: 'RATE_LIMITED' });
    await b.admit('203.0.113.8');
  });

  it('fails closed: with the database out of reach an attempt is refused with 503, never admitted uncounted', async () => {
    const gone = await connectMongo(uri, dbName);
    const limiter = new LoginLimiter(new SharedLimits(gone.db), budget(10));
    await gone.client.close();
    const outcome = await limiter.attempt('192.0.2.9', 'outage@example.test').then(
      () => null,
      (err: unknown) => err,
    );
    expect(outcome).to.be.instanceOf(HttpError);
    expect(outcome).to.include({ status: 503, code: 'UNAVAILABLE' });
  });

  it('sweeps only windows that have ended', async () => {
    const limits = new SharedLimits(one.db);
    await new LoginLimiter(limits, budget(5)).attempt('192.0.2.20', 'sweep@example.test');
    const before = await one.db.collection(ACCOUNT_LIMITS_COLLECTION).countDocuments();
    expect(await limits.sweep(new Date())).to.equal(0);
    expect(await one.db.collection(ACCOUNT_LIMITS_COLLECTION).countDocuments()).to.equal(before);
    expect(await limits.sweep(new Date(Date.now() + 3 * 3600_000))).to.equal(before);
  });

  it('refuses a burst that straddles a window boundary: more than the budget within half a window never passes', async () => {
    // A 2-second window: the aligned limiter's windows start on even seconds, the other's on odd ones.
    const limiter = new SharedLimits(one.db).limiter('straddle', 3, 2);
    const clockAt = async (from: number, to: number) => {
      while (Date.now() % 2000 < from || Date.now() % 2000 >= to) await new Promise((r) => setTimeout(r, 10));
    };
    await clockAt(1100, 1500);
    for (let i = 0; i < 3; i++) await limiter.consume('k');
    // The aligned window turns over: alone, it would admit three more at once.
    await clockAt(0, 500);
    const fourth = await limiter.consume('k').then(
      () => null,
      (err: unknown) => err,
    );
    expect(fourth).to.be.instanceOf(RateLimiterRes);
  });
});
