import { expect } from 'chai';
import { newEvent, type Event } from '../../../events/envelope.ts';
import { assessKey } from '../../../services/keys/assess.ts';
import type { KeyGeneratedData } from '../../../services/keys/events.ts';
import { keysProjection, recordForKey, type KeyRecord } from '../../../services/keys/keys.projection.ts';
import { noUsage } from '../../../services/keys/usage.ts';
import { subscriptionCreated } from '../../support/subscriptions.ts';

/**
 * A subscription's keys as one: a team member's key shares the subscription key's revocation and
 * is bounded by its expiry (a rotation carries it on), and every key of a subscription counts its
 * uses under one meter, the first key's, so a rotation does not start the month again.
 *
 * Keys travel on partitions by key hash and subscription events on their own topic, so the
 * projection sees them interleaved in any order that keeps each partition's own: every such order
 * must give the same verdicts (what a replay would answer is what the live projection answered).
 */
const SUB = 'sub-t';
const T0 = new Date('2026-11-25T12:00:00Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const hash = (c: string) => c.repeat(64);

const key = (k: string, generation: number, seconds: number, extra: Partial<KeyGeneratedData> = {}) =>
  newEvent(
    'key.generated',
    {
      keyHash: hash(k),
      last4: k.repeat(4),
      tier: 'team',
      customerId: 'cus-t',
      subscriptionId: SUB,
      email: 'owner@example.test',
      encryptedKey: 'x',
      source: generation === 0 ? 'subscription' : 'rotation',
      generation,
      replacesLast4: null,
      ...extra,
    } satisfies KeyGeneratedData,
    { occurredAt: at(seconds) },
  );
const memberKey = (k: string, membershipId: string, seconds: number) =>
  key(k, 0, seconds, { source: 'member', memberUserId: `user-${membershipId}`, membershipId, email: `${membershipId}@example.test` });
const revoked = (k: string, seconds: number) =>
  newEvent('key.revoked', { keyHash: hash(k), subscriptionId: SUB, reason: 'revoked by operator' }, { occurredAt: at(seconds) });
const created = (tier: 'team' | 'pro'): Event =>
  subscriptionCreated({ subscriptionId: SUB, userId: 'owner', email: 'owner@example.test', tier });

function fold(events: readonly Event[]): KeyRecord {
  return events.reduce<KeyRecord | null>((doc, e) => keysProjection.evolve(doc as never, e as never) as KeyRecord, null)!;
}

/** Every order of the partitions' events that keeps each partition's own order. */
function interleavings<T>(parts: readonly (readonly T[])[]): T[][] {
  const live = parts.filter((p) => p.length > 0);
  if (live.length === 0) return [[]];
  const out: T[][] = [];
  live.forEach((part, i) => {
    const rest = live.map((p, j) => (j === i ? p.slice(1) : p));
    for (const tail of interleavings(rest)) out.push([part[0]!, ...tail]);
  });
  return out;
}

/** The verdict on a key at a moment: valid, or the refusal's code. */
function verdict(record: KeyRecord, k: string, seconds: number): string {
  const view = recordForKey(record, hash(k));
  if (!view) return 'NOT_FOUND';
  const r = assessKey(view, noUsage(), { metric: 'queries', amount: 1 }, at(seconds).getTime());
  return r.valid ? 'valid' : r.code;
}

/** The verdicts on a key at moments, the same in every order of the partitions; returns them. */
function inEveryOrder(parts: readonly (readonly Event[])[], k: string, moments: readonly number[]): string[] {
  const orders = interleavings(parts);
  const first = moments.map((s) => verdict(fold(orders[0]!), k, s));
  for (const order of orders) {
    const seen = moments.map((s) => verdict(fold(order), k, s));
    expect(
      seen,
      order.map((e) => `${e.type}:${String((e.data as { keyHash?: string }).keyHash ?? '').slice(0, 1)}`).join(' '),
    ).to.deep.equal(first);
  }
  return first;
}

describe("a subscription's keys as one: member keys follow the subscription key, one month across rotations (unit)", () => {
  it("revoking the subscription's key refuses its member keys, in every order of the events", () => {
    const parts = [[created('team')], [key('a', 0, 1), revoked('a', 5)], [memberKey('m', 'ms1', 2)]];
    expect(inEveryOrder(parts, 'm', [10])).to.deep.equal(['DISABLED']);
    expect(inEveryOrder(parts, 'a', [10])).to.deep.equal(['DISABLED']);
    // Before the revocation the member's key worked.
    expect(verdict(fold([created('team'), key('a', 0, 1), memberKey('m', 'ms1', 2)]), 'm', 3)).to.equal('valid');
  });

  it('a member key joining after the revocation is refused too, and works again once a rotation issues a new subscription key', () => {
    const suspended = [[created('team')], [key('a', 0, 1), revoked('a', 5)], [memberKey('m', 'ms1', 6)]];
    expect(inEveryOrder(suspended, 'm', [10])).to.deep.equal(['DISABLED']);
    const restored = [[created('team')], [key('a', 0, 1), revoked('a', 5)], [key('b', 1, 8)], [memberKey('m', 'ms1', 6)]];
    expect(inEveryOrder(restored, 'm', [10])).to.deep.equal(['valid']);
  });

  it("a member key is bounded by the subscription key's expiry: EXPIRED from that instant when no key follows", () => {
    const parts = [[created('team')], [key('a', 0, 1, { expiresAt: at(60) })], [memberKey('m', 'ms1', 2)]];
    expect(inEveryOrder(parts, 'm', [59.999, 60, 10 ** 6])).to.deep.equal(['valid', 'EXPIRED', 'EXPIRED']);
    const fold1 = fold([created('team'), key('a', 0, 1, { expiresAt: at(60) }), memberKey('m', 'ms1', 2)]);
    expect(recordForKey(fold1, hash('m'))?.expiresAt).to.deep.equal(at(60));
  });

  it('a rotation carries member keys on: the replaced key expiring or being revoked does not touch them; the new key bounds them', () => {
    // The old key had an expiry and a grace period; the new one none: members work on past both.
    const rotated = [
      [created('team')],
      [key('a', 0, 1, { expiresAt: at(100) }), revoked('a', 30)],
      [key('b', 1, 20, { previousValidUntil: at(50) })],
      [memberKey('m', 'ms1', 2)],
    ];
    expect(inEveryOrder(rotated, 'm', [25, 60, 10 ** 6])).to.deep.equal(['valid', 'valid', 'valid']);
    expect(inEveryOrder(rotated, 'b', [10 ** 6])).to.deep.equal(['valid']);
    // A rotation with an expiry bounds the members by it.
    const bounded = [[created('team')], [key('a', 0, 1)], [key('b', 1, 20, { expiresAt: at(200) })], [memberKey('m', 'ms1', 2)]];
    expect(inEveryOrder(bounded, 'm', [199, 200])).to.deep.equal(['valid', 'EXPIRED']);
    // Revoking the new (current) key after a rotation refuses the members, whatever arrived first.
    const revokedNew = [[created('team')], [key('a', 0, 1)], [key('b', 1, 20), revoked('b', 30)], [memberKey('m', 'ms1', 2)]];
    expect(inEveryOrder(revokedNew, 'm', [40])).to.deep.equal(['DISABLED']);
  });

  it("a rotated key counts under the subscription's first key, in every order, and so does a member key", () => {
    const parts = [[created('team')], [key('a', 0, 1)], [key('b', 1, 20)], [key('c', 2, 40)], [memberKey('m', 'ms1', 2)]];
    for (const order of interleavings(parts)) {
      const record = fold(order);
      expect(record.meter).to.deep.equal({ keyHash: hash('a'), generation: 0 });
      for (const k of ['c', 'm']) {
        const r = assessKey(recordForKey(record, hash(k))!, noUsage(), { metric: 'queries', amount: 1 }, at(50).getTime());
        expect(r.valid && r.identity.keyHash, k).to.equal(hash('a'));
        // Remote gates are told the meter (meteredAs) and record their uses under it.
        expect(r.valid && r.identity.sharesQuota, k).to.equal(true);
      }
    }
  });

  it('a key never rotated counts under its own hash (a POST /generate key is its own subscription), the view no copy of the record', () => {
    const record = fold([key('a', 0, 1, { source: 'api' })]);
    const view = recordForKey(record, hash('a'))!;
    expect(view).to.equal(record);
    const r = assessKey(view, noUsage(), { metric: 'queries', amount: 1 }, at(2).getTime());
    expect(r.valid && r.identity.keyHash).to.equal(hash('a'));
    expect(r.valid && r.identity.sharesQuota).to.equal(undefined);
  });

  it('a record kept before the meter was: its next rotation counts on under the key it replaces; the key its grace keeps too', () => {
    const old = fold([created('pro'), key('a', 0, 1), key('b', 1, 10)]);
    delete old.meter;
    const rotated = keysProjection.evolve(old as never, key('c', 2, 20, { previousValidUntil: at(100) }) as never) as KeyRecord;
    expect(rotated.meter).to.deep.equal({ keyHash: hash('b'), generation: 1 });
    for (const k of ['b', 'c']) {
      const r = assessKey(recordForKey(rotated, hash(k))!, noUsage(), { metric: 'queries', amount: 1 }, at(30).getTime());
      expect(r.valid && r.identity.keyHash, k).to.equal(hash('b'));
    }
  });

  it('the record itself is the same in every order: a replay stores what the live projection stored', () => {
    const parts = [
      [created('team')],
      [key('a', 0, 1), revoked('a', 30)],
      [key('b', 1, 20, { previousValidUntil: at(50) })],
      [memberKey('m', 'ms1', 2)],
      [memberKey('n', 'ms2', 3)],
    ];
    const records = interleavings(parts).map(fold);
    for (const r of records) expect(r).to.deep.equal(records[0]);
    expect(records[0]!.members?.map((m) => m.membershipId)).to.deep.equal(['ms1', 'ms2']);
  });

  it('a lost race (a second key of generation 0) moves neither the key nor the meter', () => {
    const record = fold([key('a', 0, 1), key('z', 0, 2)]);
    expect(record.keyHash).to.equal(hash('a'));
    expect(record.meter).to.deep.equal({ keyHash: hash('a'), generation: 0 });
  });
});
