import { expect } from 'chai';
import { newEvent } from '../../../events/envelope.ts';
import { assessKey } from '../../../services/keys/assess.ts';
import type { KeyGeneratedData } from '../../../services/keys/events.ts';
import { keysProjection, recordForKey, type KeyRecord } from '../../../services/keys/keys.projection.ts';
import { noUsage } from '../../../services/keys/usage.ts';
import type { SubscriptionCreated, SubscriptionEvent } from '../../../services/billing/events.ts';
import type { TeamEvent, TeamMemberInvitedData, TeamMemberJoinedData } from '../../../services/teams/events.ts';
import {
  acceptable,
  decryptInvitationToken,
  encryptInvitationToken,
  invitationTokenHash,
  newInvitationToken,
  INVITATION_TOKEN,
} from '../../../services/teams/invitation-token.ts';
import { evolveTeam, MAX_MEMBERS, type TeamRecord } from '../../../services/teams/workspaces.projection.ts';
import { randomBytes } from 'node:crypto';

const T0 = new Date('2026-11-26T12:00:00Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const SUB = 'sub-team';

const invited = (id: string, email: string, seconds: number, extra: Partial<TeamMemberInvitedData> = {}) =>
  newEvent(
    'team.member-invited',
    {
      subscriptionId: SUB,
      invitationId: id,
      email,
      role: 'member',
      tokenHash: `hash-${id}`,
      encryptedToken: 'x',
      expiresAt: at(seconds + 3600),
      invitedBy: 'owner',
      ...extra,
    } satisfies TeamMemberInvitedData,
    { occurredAt: at(seconds) },
  );
const joined = (membershipId: string, userId: string, invitationId: string | null, seconds: number) =>
  newEvent(
    'team.member-joined',
    {
      subscriptionId: SUB,
      membershipId,
      userId,
      email: `${userId}@example.test`,
      role: 'member',
      via: invitationId ? 'invitation' : 'sso',
      invitationId,
    } satisfies TeamMemberJoinedData,
    { occurredAt: at(seconds) },
  );
const removed = (membershipId: string, userId: string, seconds: number) =>
  newEvent('team.member-removed', { subscriptionId: SUB, membershipId, userId, removedBy: 'owner' }, { occurredAt: at(seconds) });

const team = (events: TeamEvent[]): TeamRecord => events.reduce<TeamRecord | null>((doc, e) => evolveTeam(doc, e), null)!;

describe('team workspaces: the projection and invitation tokens (unit)', () => {
  it('lets someone in only through a pending invitation before it expires, once', () => {
    const t = team([invited('i1', 'ana@example.test', 0), joined('m1', 'ana', 'i1', 10), joined('m2', 'ana', 'i1', 11)]);
    expect(t.members.map((m) => m.membershipId)).to.deep.equal(['m1']);
    expect(t.invitations[0]?.status).to.equal('accepted');
    // Someone else with the used invitation: refused; a join after expiry: refused.
    expect(
      team([invited('i1', 'ana@example.test', 0), joined('m1', 'ana', 'i1', 10), joined('m3', 'bo', 'i1', 12)]).members,
    ).to.have.length(1);
    expect(team([invited('i2', 'cy@example.test', 0), joined('m4', 'cy', 'i2', 3601)]).members).to.deep.equal([]);
    // A withdrawn invitation lets no one in.
    const withdrawn = newEvent(
      'team.invitation-revoked',
      { subscriptionId: SUB, invitationId: 'i3', revokedBy: 'owner' },
      { occurredAt: at(5) },
    );
    expect(team([invited('i3', 'dee@example.test', 0), withdrawn, joined('m5', 'dee', 'i3', 10)]).members).to.deep.equal([]);
  });

  it('a new invitation to the same address replaces the pending one; a removed membership does not come back', () => {
    const t = team([invited('i1', 'ana@example.test', 0), invited('i2', 'ana@example.test', 5)]);
    expect(t.invitations.map((i) => [i.invitationId, i.status])).to.deep.equal([
      ['i1', 'revoked'],
      ['i2', 'pending'],
    ]);
    const gone = team([joined('m1', 'ana', null, 0), removed('m1', 'ana', 5), joined('m1', 'ana', null, 6)]);
    expect(gone.members).to.deep.equal([]);
    expect(gone.ended).to.deep.equal(['m1']);
    // Joining again is a new membership.
    expect(
      team([joined('m1', 'ana', null, 0), removed('m1', 'ana', 5), joined('m2', 'ana', null, 6)]).members.map((m) => m.membershipId),
    ).to.deep.equal(['m2']);
  });

  it('holds at most MAX_MEMBERS members', () => {
    const events = Array.from({ length: MAX_MEMBERS + 3 }, (_, i) => joined(`m${i}`, `u${i}`, null, i));
    expect(team(events).members).to.have.length(MAX_MEMBERS);
  });

  it('accepts an invitation while pending and unexpired only', () => {
    expect(acceptable({ status: 'pending', expiresAt: at(10) }, at(9).getTime())).to.equal('ok');
    expect(acceptable({ status: 'pending', expiresAt: at(10) }, at(11).getTime())).to.equal('expired');
    expect(acceptable({ status: 'accepted', expiresAt: at(10) }, at(9).getTime())).to.equal('used');
    expect(acceptable({ status: 'revoked', expiresAt: at(10) }, at(9).getTime())).to.equal('used');
  });

  it('an invitation token is 256 random bits, stored hashed, and opens only in its own event', () => {
    const token = newInvitationToken();
    expect(token).to.match(INVITATION_TOKEN);
    expect(newInvitationToken()).to.not.equal(token);
    const key = randomBytes(32);
    const blob = encryptInvitationToken(token, key, SUB);
    expect(blob).to.not.include(token);
    expect(decryptInvitationToken(blob, key, { tokenHash: invitationTokenHash(token), subscriptionId: SUB })).to.equal(token);
    expect(() => decryptInvitationToken(blob, key, { tokenHash: invitationTokenHash(token), subscriptionId: 'other' })).to.throw(
      /cannot decrypt/,
    );
  });
});

const hash = (c: string) => c.repeat(64);
const keyEvent = (key: string, extra: Partial<KeyGeneratedData>, seconds: number) =>
  newEvent(
    'key.generated',
    {
      keyHash: hash(key),
      last4: key.repeat(4),
      tier: 'team',
      customerId: 'cus-1',
      subscriptionId: SUB,
      email: 'owner@example.test',
      encryptedKey: 'x',
      source: 'subscription',
      generation: 0,
      replacesLast4: null,
      ...extra,
    } satisfies KeyGeneratedData,
    { occurredAt: at(seconds) },
  );
const memberKey = (key: string, userId: string, membershipId: string, seconds: number) =>
  keyEvent(key, { source: 'member', memberUserId: userId, membershipId, email: `${userId}@example.test` }, seconds);
const created = (tier: 'team' | 'pro'): SubscriptionCreated =>
  newEvent('subscription.created', {
    subscriptionId: SUB,
    customerId: 'cus-1',
    userId: 'owner',
    email: 'owner@example.test',
    name: null,
    variantId: '1',
    tier,
    status: 'active',
    renewsAt: null,
    endsAt: null,
    providerUpdatedAt: at(0),
    customerPortalUrl: null,
    updatePaymentUrl: null,
  });
type KeysEvent = Parameters<typeof keysProjection.evolve>[1];
const keysOf = (events: (KeysEvent | SubscriptionEvent)[]): KeyRecord =>
  events.reduce<KeyRecord | null>((doc, e) => keysProjection.evolve(doc as never, e as KeysEvent) as KeyRecord, null)!;
const verdict = (record: KeyRecord | null) => {
  if (!record) return 'NOT_FOUND';
  const r = assessKey(record, noUsage(), { metric: 'queries', amount: 1 }, at(100).getTime());
  return r.valid ? `valid:${r.identity.keyHash.slice(0, 1)}` : r.code;
};

describe("team members' keys in the keys projection (unit)", () => {
  it('sit beside the subscription key, count against it, and never replace it', () => {
    const record = keysOf([created('team'), keyEvent('a', {}, 1), memberKey('m', 'ana', 'ms1', 2)]);
    expect(record.keyHash).to.equal(hash('a'));
    expect(verdict(recordForKey(record, hash('a')))).to.equal('valid:a');
    // The member's key is valid and metered as the team's key.
    expect(verdict(recordForKey(record, hash('m')))).to.equal('valid:a');
    expect(recordForKey(record, hash('m'))?.member).to.deep.equal({ userId: 'ana', membershipId: 'ms1' });
  });

  it('stops with its membership, even when the removal arrives before the key', () => {
    const removal = removed('ms1', 'ana', 3);
    expect(
      verdict(recordForKey(keysOf([created('team'), keyEvent('a', {}, 1), memberKey('m', 'ana', 'ms1', 2), removal]), hash('m'))),
    ).to.equal('NOT_FOUND');
    expect(
      verdict(recordForKey(keysOf([created('team'), keyEvent('a', {}, 1), removal, memberKey('m', 'ana', 'ms1', 2)]), hash('m'))),
    ).to.equal('NOT_FOUND');
  });

  it('works only while the subscription grants the team tier', () => {
    const downgraded = keysOf([created('team'), keyEvent('a', {}, 1), memberKey('m', 'ana', 'ms1', 2), created('pro')]);
    expect(verdict(recordForKey(downgraded, hash('m')))).to.equal('DISABLED');
    expect(verdict(recordForKey(downgraded, hash('a')))).to.equal('valid:a');
  });
});
