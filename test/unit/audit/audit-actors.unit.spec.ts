import { expect } from 'chai';
import { newEvent } from '../../../events/envelope.ts';
import { auditEntryOf, type AuditedEvent } from '../../../services/audit/audit-entry.ts';
import { assessKey, quotaReport } from '../../../services/keys/assess.ts';
import type { KeyRecord } from '../../../services/keys/keys.projection.ts';
import { limitsOf } from '../../../services/kernel/tiers.ts';
import { noUsage } from '../../../services/keys/usage.ts';
import { answerOf } from '../../../services/keys/validate-answer.ts';
import { callerOf } from '../../../services/premium/gated-request.ts';
import { noteFile, parseNoteFile } from '../../../services/rag/memory/notes.ts';

/** An audited event of this type, its data checked against the type's. */
const event = <T extends AuditedEvent['type']>(type: T, data: Extract<AuditedEvent, { type: T }>['data']): AuditedEvent =>
  newEvent(type, data, { correlationId: 'c' }) as AuditedEvent;
const TEAM_HASH = 'a'.repeat(64);
const MEMBER_HASH = 'b'.repeat(64);

const teamRecord: KeyRecord = {
  subscriptionId: 'sub-1',
  keyHash: MEMBER_HASH,
  last4: 'Mmmm',
  tier: 'team',
  status: 'active',
  subscriptionStatus: 'active',
  paidTier: 'team',
  customerId: 'cus-1',
  email: 'owner@example.test',
  userId: 'u-owner',
  createdAt: new Date(),
  endsAt: null,
  member: { userId: 'u-ana', membershipId: 'ms-1' },
  usageKeyHash: TEAM_HASH,
};

describe("audit log: who did a keyed call, a team member's own key included (unit)", () => {
  it("names a member key's member and last four in its identity, and its quota's hash apart", () => {
    const r = assessKey(teamRecord, noUsage(), { metric: 'queries', amount: 1 });
    if (!r.valid) throw new Error(r.code);
    expect(r.identity).to.include({ keyHash: TEAM_HASH, last4: 'Mmmm', memberUserId: 'u-ana' });
    const caller = callerOf({ identity: r.identity, usage: r.usage, reserve: async () => null });
    expect(caller).to.include({ keyHash: TEAM_HASH, keyLast4: 'Mmmm', memberUserId: 'u-ana' });
    // The subscription's own key names no member.
    const own = assessKey({ ...teamRecord, keyHash: TEAM_HASH, last4: 'Tttt', member: undefined, usageKeyHash: undefined }, noUsage(), {
      metric: 'queries',
      amount: 1,
    });
    if (!own.valid) throw new Error(own.code);
    expect(own.identity.memberUserId).to.equal(undefined);
  });

  it("tells a remote gate the member a key is, and only for a member's key", () => {
    const identity = {
      keyHash: TEAM_HASH,
      tier: 'team' as const,
      customerId: 'cus-1',
      subscriptionId: 'sub-1',
      sharesQuota: true as const,
    };
    const result = { valid: true as const, usage: quotaReport('team', noUsage()), features: { ...limitsOf('team').features } };
    const member = JSON.parse(answerOf({ result: { ...result, identity: { ...identity, memberUserId: 'u-ana' } }, rate: null }).body);
    expect(member).to.include({ memberUserId: 'u-ana', meteredAs: TEAM_HASH });
    const team = JSON.parse(answerOf({ result: { ...result, identity }, rate: null }).body);
    expect(team).not.to.have.property('memberUserId');
  });

  it("records a member's collection acts as the member's account, with the key's last four; older events as they were", () => {
    const deleted = auditEntryOf(
      event('rag.collection-deleted', {
        collectionId: 'c',
        customerId: 'cus-1',
        collectionName: 'docs',
        memberUserId: 'u-ana',
        keyLast4: 'Mmmm',
      }),
    );
    expect(deleted).to.deep.include({ actor: 'account:u-ana', target: 'collection docs', userId: null, subscriptionId: null });
    expect(deleted.details).to.deep.equal({ key: '…Mmmm' });
    const byTeamKey = auditEntryOf(
      event('rag.index-requested', {
        jobId: 'j',
        collectionId: 'c',
        customerId: 'cus-1',
        collectionName: 'docs',
        source: 'files',
        files: [],
        keyHash: TEAM_HASH,
        memberUserId: null,
        keyLast4: 'Tttt',
      }),
    );
    expect(byTeamKey.actor).to.equal('key:…Tttt');
    // Written before v2: what it said then.
    const old = auditEntryOf(event('rag.collection-deleted', { collectionId: 'c', customerId: 'cus-1', collectionName: 'docs' }));
    expect(old).to.deep.include({ actor: 'owner', details: {} });
  });

  it("writes a note's author as the member with the key's last four, and reads notes written before that", () => {
    const note = {
      id: 'n1',
      text: 'Releases on Tuesdays.',
      tags: ['process'],
      createdAt: '2026-11-26T12:00:00.000Z',
      author: 'account:u-ana',
      authorKey: '…Mmmm',
    };
    expect(parseNoteFile('notes/n1.md', noteFile(note))).to.deep.equal(note);
    const older = '---\nauthor: key:aaaaaaaaaaaa\ncreated: 2026-11-26T12:00:00.000Z\ntags: \n---\nOld note.\n';
    expect(parseNoteFile('notes/n0.md', older)).to.deep.equal({
      id: 'n0',
      text: 'Old note.',
      tags: [],
      createdAt: '2026-11-26T12:00:00.000Z',
      author: 'key:aaaaaaaaaaaa',
      authorKey: null,
    });
  });
});
