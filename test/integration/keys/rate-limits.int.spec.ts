import { randomBytes, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { MongoClient } from 'mongodb';
import { keyMetrics } from '../../../services/keys/metrics.ts';
import { RateLimits, RateLimitStoreError, type LimitDecision, type RateLimitsOptions } from '../../../services/keys/rate-limits.ts';
import { connectMongo, type MongoHandle } from '../../../services/platform/mongo.ts';
import { eventually } from '../../support/env.ts';
import { windowWithRoom } from '../../support/rate-windows.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';

const keyHash = (): string => randomBytes(32).toString('hex');
const allowedCount = (ds: LimitDecision[]): number => ds.filter((d) => d.allowed).length;

function expectRefused(d: LimitDecision | undefined, limit: number, windowMs = 60_000): void {
  expect(d, 'a decision').to.not.equal(undefined);
  expect(d!.allowed).to.equal(false);
  expect(d!.limit).to.equal(limit);
  expect(d!.remaining).to.equal(0);
  // The end of the window it was refused in: a boundary of the clock's windows, ahead of now.
  expect(d!.resetAt % windowMs).to.equal(0);
  expect(d!.resetAt - Date.now())
    .to.be.greaterThan(0)
    .and.at.most(windowMs);
}

describe('rate limits shared through MongoDB (integration)', () => {
  // Two "processes": separate clients, so separate connection pools and no shared memory.
  let one: MongoHandle;
  let two: MongoHandle;
  let dbName: string;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    const env = await useStack();
    dbName = `test_${randomUUID().slice(0, 8)}`;
    one = await connectMongo(env.MONGODB_URI, dbName);
    two = await connectMongo(env.MONGODB_URI, dbName);
  });

  after(async () => {
    await one?.db.dropDatabase().catch(() => undefined);
    await one?.client.close();
    await two?.client.close();
  });

  let lastCollection = '';
  // A collection per test: FerretDB's lookups by _id scan the collection, so small ones stay fast.
  function pair(options: RateLimitsOptions = {}): [RateLimits, RateLimits] {
    const collection = `rl_${randomUUID().slice(0, 8)}`;
    lastCollection = collection;
    return [new RateLimits(one.client, dbName, { ...options, collection }), new RateLimits(two.client, dbName, { ...options, collection })];
  }
  const blocksHeld = (key: string): Promise<number> => one.db.collection(lastCollection).countDocuments({ key: `key-pro:${key}` });

  it('refuses the 61st request in a minute on a free key, with remaining 0 and the time to the reset', async () => {
    // Its 61 requests within one window (a minute turning between two of them started the count over).
    const windowEnd = await windowWithRoom(60);
    const [limits] = pair();
    const key = keyHash();
    for (let i = 1; i <= 60; i++) {
      const d = await limits.consumeKey(key, 'free');
      // Every decision of the window names its end, the same instant, held or claimed.
      expect(d, `request ${i}`).to.include({ allowed: true, limit: 60, remaining: 60 - i, resetAt: windowEnd });
    }
    const refusedBefore = keyMetrics.rateLimited.value({ tier: 'free' });
    expectRefused(await limits.consumeKey(key, 'free'), 60);
    expect(keyMetrics.rateLimited.value({ tier: 'free' }), 'svc_rate_limited_total{tier="free"}').to.equal(refusedBefore + 1);
    expect(await limits.consumeKey(keyHash(), 'free'), 'another key has its own count').to.include({ allowed: true, remaining: 59 });
  });

  it('shares one count between two instances with separate clients, request by request without blocks', async () => {
    await windowWithRoom(60);
    const [a, b] = pair({ blockFraction: 0 });
    const key = keyHash();
    const decisions: LimitDecision[] = [];
    for (let i = 0; i < 61; i++) decisions.push(await (i % 2 === 0 ? a : b).consumeKey(key, 'free'));
    expect(decisions.slice(0, 60).map((d) => d.remaining)).to.deep.equal(Array.from({ length: 60 }, (_, i) => 59 - i));
    expectRefused(decisions[60], 60);
  });

  it('admits exactly the limit when requests race within an instance', async () => {
    await windowWithRoom(60);
    const [a] = pair();
    const key = keyHash();
    const decisions = await Promise.all(Array.from({ length: 80 }, () => a.consumeKey(key, 'free')));
    expect(allowedCount(decisions)).to.equal(60);
    // Each admitted request got its own place in the window.
    expect(
      decisions
        .filter((d) => d.allowed)
        .map((d) => d.remaining)
        .sort((x, y) => x - y),
    ).to.deep.equal(Array.from({ length: 60 }, (_, i) => i));
    for (const d of decisions.filter((x) => !x.allowed)) expectRefused(d, 60);
  });

  it('across instances never admits past the limit, and falls short by at most a block and two thirds per instance', async () => {
    await windowWithRoom(60);
    const [a, b] = pair(); // free: blocks of 3
    const key = keyHash();
    const decisions = await Promise.all(Array.from({ length: 80 }, (_, i) => (i % 2 === 0 ? a : b).consumeKey(key, 'free')));
    // Whichever instance still holds slots claimed ahead may spend them; then both refuse.
    for (const instance of [a, b]) {
      for (let i = 0; i < 3; i++) decisions.push(await instance.consumeKey(key, 'free'));
      expectRefused(await instance.consumeKey(key, 'free'), 60);
    }
    // Each may hold the rest of its block and one claimed ahead: 2 + 3 left unspent at most.
    expect(allowedCount(decisions))
      .to.be.at.most(60)
      .and.at.least(60 - 2 * (2 + 3));
  });

  it('gives a pro key 600 requests a minute', async () => {
    await windowWithRoom(60);
    const [a, b] = pair();
    const key = keyHash();
    const decisions: LimitDecision[] = [];
    // Bursts of 50 alternate the instances and mix racing with sequential requests.
    for (let burst = 0; burst < 13; burst++) {
      decisions.push(...(await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? a : b).consumeKey(key, 'pro')))));
    }
    // Spend whatever either instance still holds, then both refuse.
    for (const instance of [a, b]) {
      for (let i = 0; i < 30; i++) decisions.push(await instance.consumeKey(key, 'pro'));
      expectRefused(await instance.consumeKey(key, 'pro'), 600);
    }
    expect(allowedCount(decisions))
      .to.be.at.most(600)
      .and.at.least(600 - 2 * (20 + 30));
    expect(decisions[0]).to.include({ limit: 600 });
  });

  it('claims the next block in the background once a third to two thirds of the current one is spent', async () => {
    await windowWithRoom(60);
    const [limits] = pair(); // pro: blocks of 30
    const key = keyHash();
    for (let i = 0; i < 9; i++) await limits.consumeKey(key, 'pro');
    expect(await blocksHeld(key), 'more than two thirds of the first block left').to.equal(1);
    // Blocks of this window only: in the last 30 % of a minute the next window's first block is
    // claimed ahead as well (CI once ran this there, and counted three blocks for the key).
    const first = await one.db.collection<{ _id: string; window: number }>(lastCollection).findOne({ key: `key-pro:${key}` });
    const inWindow = () => one.db.collection(lastCollection).countDocuments({ key: `key-pro:${key}`, window: first?.window });
    for (let i = 10; i <= 20; i++) await limits.consumeKey(key, 'pro');
    await eventually('the next block to be claimed ahead', async () => ((await inWindow()) === 2 ? true : undefined));
    for (let i = 21; i <= 30; i++) await limits.consumeKey(key, 'pro');
    expect(await limits.consumeKey(key, 'pro'), 'the 31st request spends the block claimed ahead').to.include({
      allowed: true,
      remaining: 569,
    });
  });

  it("counts each tier on its own: an upgraded key gets the new tier's full minute", async () => {
    await windowWithRoom(60);
    const [limits] = pair();
    const key = keyHash();
    expect(allowedCount(await Promise.all(Array.from({ length: 61 }, () => limits.consumeKey(key, 'free'))))).to.equal(60);
    expect(await limits.consumeKey(key, 'pro')).to.include({ allowed: true, limit: 600, remaining: 599 });
  });

  it('limits each client IP on its own, 6000 a minute by default', async () => {
    await windowWithRoom(60);
    const [defaults] = pair();
    expect(await defaults.consumeIp('198.51.100.1')).to.include({ allowed: true, limit: 6000, remaining: 5999 });

    const [a, b] = pair({ perIpPerMinute: 5 });
    const ip = '203.0.113.7';
    const decisions: LimitDecision[] = [];
    for (let i = 0; i < 5; i++) decisions.push(await (i % 2 === 0 ? a : b).consumeIp(ip));
    expect(allowedCount(decisions)).to.equal(5);
    expectRefused(await a.consumeIp(ip), 5);
    expectRefused(await b.consumeIp(`::ffff:${ip}`), 5); // the same client seen on a dual-stack socket
    expect(await a.consumeIp('203.0.113.8'), 'another IP').to.include({ allowed: true, remaining: 4 });
    expect(await a.consumeKey(keyHash(), 'free'), 'key limits are separate').to.include({ allowed: true, remaining: 59 });
  });

  it('opens a fresh window once the current one ends', async () => {
    await windowWithRoom(2, 1500);
    const [a, b] = pair({ windowSeconds: 2, perIpPerMinute: 3 });
    const ip = '192.0.2.10';
    for (let i = 0; i < 3; i++) expect(await a.consumeIp(ip)).to.include({ allowed: true });
    const refused = await a.consumeIp(ip);
    const refusedAt = Date.now();
    expectRefused(refused, 3, 2000);
    // Refusals take no slot, so polling until admitted watches the real reset.
    const fresh = await eventually('the IP window to reset', async () => {
      const d = await b.consumeIp(ip);
      return d.allowed ? d : undefined;
    });
    expect(Date.now() - refusedAt, 'not before the announced reset').to.be.at.least(refused.resetAt - refusedAt - 50);
    expect(fresh).to.include({ remaining: 2 });

    const key = keyHash();
    await windowWithRoom(2, 1500);
    // Each decision with the end of the window it was made in (its answer time plus its reset): a
    // database stall can carry a burst over a window's end (seen once in CI: 2.8 s), and then each
    // window is held to the limit on its own.
    const burst = await Promise.all(
      Array.from({ length: 61 }, async (_, i) => {
        const d = await (i % 2 === 0 ? a : b).consumeKey(key, 'free');
        return { ...d, windowEnd: d.resetAt / 2000 };
      }),
    );
    const perWindow = new Map<number, number>();
    for (const d of burst) if (d.allowed) perWindow.set(d.windowEnd, (perWindow.get(d.windowEnd) ?? 0) + 1);
    for (const [end, allowed] of perWindow) expect(allowed, `admitted in the window ending at ${end * 2000}`).to.be.at.most(60);
    expect(allowedCount(burst)).to.be.at.least(60 - 2 * (2 + 3));
    // An instance may first spend slots it claimed ahead in the old window; the new window's first
    // request is the one with 59 left.
    const next = await eventually('the key window to reset', async () => {
      const d = await a.consumeKey(key, 'free');
      return d.allowed && d.remaining === 59 ? d : undefined;
    });
    expect(next).to.include({ remaining: 59 });
  });

  it('enters the next window at once on the block it claimed ahead, with no wait on the database', async () => {
    // A window of 2 s: its first block is claimed ahead in the last 40–600 ms of the one before, where
    // in that range drawn per key. Fixed at its start here: a range drawn 40 ms long was missed by a
    // loop that stalled for longer (CI, 2026-12-07), and nothing was claimed ahead.
    const [limits] = pair({ windowSeconds: 2, claimAheadJitter: () => 1 });
    const key = keyHash();
    const end = await windowWithRoom(2, 1500);
    expect(await limits.consumeKey(key, 'pro')).to.include({ allowed: true, remaining: 599 });
    const next = end / 2000;
    const claimedAhead = () => one.db.collection(lastCollection).countDocuments({ key: `key-pro:${key}`, window: next });
    // Requests every 5 ms up to the window's end: one in its last 40 ms starts the claim at the
    // latest. None after the end, so that the next window's first request is the one below.
    const traffic = setInterval(() => {
      if (Date.now() < end - 5) limits.keyHeld(key, 'pro');
    }, 5);
    try {
      await eventually('the window to turn', async () => (Date.now() >= end ? true : undefined));
    } finally {
      clearInterval(traffic);
    }
    // A claim made ahead waits up to 250 ms for company before it is sent.
    await eventually("the next window's first block to be claimed ahead", async () => ((await claimedAhead()) === 1 ? true : undefined));
    // Its first request is decided where it stands, from the block granted ahead: no promise, no
    // round of consume() (at the turn, every active key's first request took that path at once).
    const first = limits.keyHeld(key, 'pro');
    expect(first, 'decided at once').to.deep.equal({ allowed: true, limit: 600, remaining: 599, resetAt: end + 2000 });
    expect(await limits.consumeKey(key, 'pro')).to.include({ allowed: true, remaining: 598 });
    expect(await claimedAhead(), 'nothing claimed again').to.equal(1);
  });

  it('sweeps ended windows only', async () => {
    await windowWithRoom(60);
    const [limits, other] = pair({ perIpPerMinute: 2 });
    const { ttl } = await limits.ensureIndexes();
    expect(ttl).to.be.a('boolean'); // false on FerretDB, which has no TTL indexes
    const ip = '192.0.2.20';
    await limits.consumeIp(ip);
    await limits.consumeIp(ip);
    expect(await limits.sweep(), 'a live window stays').to.equal(0);
    expectRefused(await limits.consumeIp(ip), 2);
    expect(await limits.sweep(new Date(Date.now() + 3 * 60_000))).to.be.greaterThan(0);
    // The swept window's blocks are free again for a process that has not seen them taken.
    expect(await other.consumeIp(ip)).to.include({ allowed: true, remaining: 1 });
  });

  it('turns a store outage into RateLimitStoreError, neither allowed nor refused', async () => {
    const dead = new MongoClient('mongodb://127.0.0.1:1/', { serverSelectionTimeoutMS: 300 });
    try {
      const limits = new RateLimits(dead, dbName);
      for (const attempt of [() => limits.consumeKey(keyHash(), 'free'), () => limits.consumeIp('192.0.2.30')]) {
        const outcome = await attempt().then(
          (d) => ({ decided: d }),
          (err: unknown) => ({ err }),
        );
        expect(outcome).to.have.property('err').that.is.instanceOf(RateLimitStoreError);
      }
    } finally {
      await dead.close();
    }
  });
});
