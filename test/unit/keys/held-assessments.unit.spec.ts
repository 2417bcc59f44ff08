import { expect } from 'chai';
import { assessKey } from '../../../services/keys/assess.ts';
import { HeldAssessments } from '../../../services/keys/held-assessments.ts';
import type { KeyRecord } from '../../../services/keys/keys.projection.ts';
import { countsOf, type UsageDocument } from '../../../services/keys/usage.ts';
import { activeKeyRecord } from '../../support/key-records.ts';

const NOW = Date.UTC(2026, 10, 30, 12);

const usage = (queries: number): UsageDocument => ({
  keyHash: 'a'.repeat(64),
  period: '2026-11',
  counts: { queries, filesIndexed: 2, screenshotsAnalyzed: 0 },
});

const plainUse = { metric: 'queries', amount: 1 } as const;

/** The key hash a record is looked up by: every record here has one. */
const hashOf = (r: KeyRecord): string => {
  if (r.keyHash === null) throw new Error('a record without a key hash');
  return r.keyHash;
};

describe('HeldAssessments: a key verification assessed once while its record and usage are unchanged', () => {
  it('assesses as assessKey does, for plain, member, rotated, free and over-quota keys', () => {
    const cases: [KeyRecord, UsageDocument | null][] = [
      [activeKeyRecord(), usage(3)],
      [activeKeyRecord(), null],
      [activeKeyRecord({ tier: 'team', usageKeyHash: 'b'.repeat(64), member: { userId: 'u-1', membershipId: 'm-1' } }), usage(0)],
      [activeKeyRecord({ tier: 'free', paidTier: null }), usage(99)],
      [activeKeyRecord({ tier: 'free', paidTier: null }), usage(1_000_000)],
      [activeKeyRecord({ status: 'revoked' }), usage(1)],
      [activeKeyRecord({ expiresAt: new Date(NOW - 1) }), usage(1)],
    ];
    for (const [r, u] of cases) {
      const held = new HeldAssessments();
      const expected = assessKey(r, countsOf(u), plainUse, NOW);
      expect(held.assess(hashOf(r), r, u, NOW), JSON.stringify(r)).to.deep.equal(expected);
      expect(held.assess(hashOf(r), r, u, NOW), 'the second time').to.deep.equal(expected);
    }
  });

  it('hands out one frozen assessment while the record and the usage are the same objects', () => {
    const held = new HeldAssessments();
    const r = activeKeyRecord();
    const u = usage(3);
    const first = held.assess(hashOf(r), r, u, NOW);
    expect(held.assess(hashOf(r), r, u, NOW + 1000)).to.equal(first);
    expect(Object.isFrozen(first)).to.equal(true);
    if (!first.valid) throw new Error('expected a valid assessment');
    expect(Object.isFrozen(first.identity)).to.equal(true);
    expect(Object.isFrozen(first.usage.queries)).to.equal(true);
    expect(Object.isFrozen(first.features)).to.equal(true);
    expect(() => {
      (first.identity as { tier: string }).tier = 'team';
    }).to.throw(TypeError);
  });

  it('assesses again when the log brings a new usage document: the counts in the answer move', () => {
    const held = new HeldAssessments();
    const r = activeKeyRecord();
    const before = held.assess(hashOf(r), r, usage(3), NOW);
    const after = held.assess(hashOf(r), r, usage(4), NOW);
    expect(after).not.to.equal(before);
    expect(after).to.deep.include({ valid: true });
    if (!after.valid) throw new Error('expected a valid assessment');
    expect(after.usage.queries.used).to.equal(4);
  });

  it('refuses a key revoked or downgraded since, at once: a changed record is a new object', () => {
    const held = new HeldAssessments();
    const r = activeKeyRecord();
    const u = usage(3);
    expect(held.assess(hashOf(r), r, u, NOW)).to.deep.include({ valid: true });
    expect(held.assess(hashOf(r), { ...r, status: 'revoked' }, u, NOW)).to.deep.include({ valid: false, code: 'DISABLED' });
    const downgraded = held.assess(hashOf(r), { ...r, tier: 'free' }, u, NOW);
    if (!downgraded.valid) throw new Error('expected a valid assessment');
    expect(downgraded.identity.tier).to.equal('free');
    expect(downgraded.features.visionRAG).to.equal(false);
  });

  it('refuses a kept key once its expiry passes, with the same record and usage', () => {
    const held = new HeldAssessments();
    const r = activeKeyRecord({ expiresAt: new Date(NOW + 60_000) });
    const u = usage(3);
    expect(held.assess(hashOf(r), r, u, NOW)).to.deep.include({ valid: true });
    expect(held.assess(hashOf(r), r, u, NOW + 60_000)).to.deep.include({ valid: false, code: 'EXPIRED' });
    expect(held.assess(hashOf(r), r, u, NOW + 120_000)).to.deep.include({ valid: false, code: 'EXPIRED' });
  });

  it("keeps each key's assessment apart: two keys sharing a usage document get their own identities", () => {
    const held = new HeldAssessments();
    const team = activeKeyRecord({ tier: 'team', customerId: 'cus-team' });
    const member = activeKeyRecord({
      tier: 'team',
      keyHash: 'c'.repeat(64),
      last4: 'cccc',
      usageKeyHash: hashOf(team),
      member: { userId: 'u-2', membershipId: 'm-2' },
    });
    const u = usage(7);
    const ofTeam = held.assess(hashOf(team), team, u, NOW);
    const ofMember = held.assess(hashOf(member), member, u, NOW);
    if (!ofTeam.valid || !ofMember.valid) throw new Error('expected valid assessments');
    expect(ofTeam.identity.memberUserId).to.equal(undefined);
    expect(ofMember.identity.memberUserId).to.equal('u-2');
    expect(held.assess(hashOf(team), team, u, NOW)).to.equal(ofTeam);
  });
});
