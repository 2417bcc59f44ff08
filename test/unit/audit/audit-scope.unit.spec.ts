import { expect } from 'chai';
import type { Document } from 'mongodb';
import { newEvent } from '../../../events/envelope.ts';
import { auditEntryOf, type AuditedEvent, type AuditEntry } from '../../../services/audit/audit-entry.ts';
import { asReadBy, auditScope, type AuditReader } from '../../../services/audit/audit-scope.ts';
import { subscriptionCreated } from '../../support/subscriptions.ts';

const SUB = 'sub-team';
const OTHER = 'sub-other';
const CUSTOMER = 'cus-1';
const OWNER = 'u-owner';
const ADMIN = 'u-admin';
const MEMBER = 'u-member';
const OTHER_MEMBER = 'u-other-member';
const MEMBER_KEY = 'b'.repeat(64);
const TEAM_KEY = 'a'.repeat(64);

/** An audited event of this type, its data checked against the type's. */
const event = <T extends AuditedEvent['type']>(type: T, data: Extract<AuditedEvent, { type: T }>['data']): AuditedEvent =>
  newEvent(type, data, { correlationId: 'c' }) as AuditedEvent;

/**
 * The part of MongoDB's query language the scope uses (equality, null for absent too, dotted paths,
 * $in, $nin), so the role table can be read against entries here; the e2e runs it on FerretDB.
 */
function matches(entry: AuditEntry, filter: Document): boolean {
  return Object.entries(filter).every(([path, want]) => {
    const value = path.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown> | null | undefined)?.[k], entry);
    if (want !== null && typeof want === 'object' && !Array.isArray(want)) {
      if ('$in' in want) return (want.$in as unknown[]).includes(value);
      if ('$nin' in want) return !(want.$nin as unknown[]).includes(value);
    }
    return want === null ? value === null || value === undefined : value === want;
  });
}
const visible = (entries: AuditEntry[], reader: AuditReader) =>
  entries.filter((e) => auditScope(reader).some((f) => matches(e, f))).map((e) => e.entryId);

const keyGenerated = (subscriptionId: string, keyHash: string, memberUserId?: string) =>
  event('key.generated', {
    keyHash,
    last4: keyHash.slice(0, 4),
    tier: 'team',
    customerId: CUSTOMER,
    subscriptionId,
    email: 'o@example.test',
    encryptedKey: 'sealed',
    source: memberUserId ? 'member' : 'subscription',
    generation: 0,
    replacesLast4: null,
    expiresAt: null,
    previousValidUntil: null,
    ...(memberUserId ? { memberUserId } : {}),
  });

const rateLimited = (keyHash: string) =>
  event('key.check-refused', { keyHash, subscriptionId: SUB, code: 'RATE_LIMITED', minute: '2026-11-26T04:41:00.000Z' });

/** One entry of every kind, each named for the test. */
const kinds = {
  invitation: event('team.member-invited', {
    subscriptionId: SUB,
    invitationId: 'i1',
    email: 'guest@example.test',
    role: 'member',
    tokenHash: 'h',
    encryptedToken: 'x',
    expiresAt: new Date(),
    invitedBy: ADMIN,
  }),
  withdrawal: event('team.invitation-revoked', { subscriptionId: SUB, invitationId: 'i1', revokedBy: ADMIN }),
  memberJoined: event('team.member-joined', {
    subscriptionId: SUB,
    membershipId: 'm1',
    userId: OTHER_MEMBER,
    email: 'other@example.test',
    role: 'member',
    via: 'invitation',
    invitationId: 'i0',
  }),
  memberLeft: event('team.member-removed', { subscriptionId: SUB, membershipId: 'm1', userId: OTHER_MEMBER, removedBy: OTHER_MEMBER }),
  sso: event('team.sso-configured', {
    subscriptionId: SUB,
    issuer: 'https://idp.example',
    clientId: 'cid',
    encryptedClientSecret: 's',
    domains: ['example.com'],
    configuredBy: OWNER,
  }),
  teamKey: keyGenerated(SUB, TEAM_KEY),
  memberKey: keyGenerated(SUB, MEMBER_KEY, MEMBER),
  otherMemberKey: keyGenerated(SUB, 'c'.repeat(64), OTHER_MEMBER),
  memberKeyRefused: rateLimited(MEMBER_KEY),
  teamKeyRefused: rateLimited(TEAM_KEY),
  billing: subscriptionCreated({ subscriptionId: SUB, userId: OWNER, email: 'o@example.test', tier: 'team' }),
  ownerLogin: event('account.logged-in', { userId: OWNER, method: 'password', subscriptionId: null }),
  ownerPassword: event('account.password-changed', { userId: OWNER, tokenVersion: 2 }),
  memberLogin: event('account.logged-in', { userId: MEMBER, method: 'password', subscriptionId: null }),
  memberSsoLogin: event('account.logged-in', { userId: MEMBER, method: 'sso', subscriptionId: SUB }),
  memberSsoElsewhere: event('account.logged-in', { userId: MEMBER, method: 'sso', subscriptionId: OTHER }),
  otherSubscription: subscriptionCreated({ subscriptionId: OTHER, userId: OWNER, email: 'o@example.test', tier: 'pro' }),
  otherSubscriptionKey: keyGenerated(OTHER, 'd'.repeat(64)),
  collectionByMember: event('rag.collection-deleted', {
    collectionId: 'c1',
    customerId: CUSTOMER,
    collectionName: 'docs',
    memberUserId: MEMBER,
    keyLast4: 'bbbb',
  }),
  collectionByTeamKey: event('rag.collection-configured', {
    collectionId: 'c2',
    customerId: CUSTOMER,
    collectionName: 'api',
    projectPath: null,
    vectorDB: 'local',
    keyLast4: 'aaaa',
  }),
  otherCustomersCollection: event('rag.collection-deleted', { collectionId: 'c3', customerId: 'cus-2', collectionName: 'x' }),
};
for (const e of [kinds.billing, kinds.otherSubscription]) e.data.customerId = CUSTOMER;
type Kind = keyof typeof kinds;
const entries = Object.entries(kinds).map(([name, e]) => ({ ...auditEntryOf(e), entryId: name }));

const reader = (role: AuditReader['role'], userId: string | null, memberKeyHash: string | null = null): AuditReader => ({
  role,
  subscriptionId: SUB,
  ownerUserId: OWNER,
  customerId: CUSTOMER,
  userId,
  memberKeyHash,
});

/** What the owner and an admin both read: the workspace, its invitations and sign-on, every key of it. */
const workspaceAndKeys: Kind[] = [
  'invitation',
  'withdrawal',
  'memberJoined',
  'memberLeft',
  'sso',
  'teamKey',
  'memberKey',
  'otherMemberKey',
  'memberKeyRefused',
  'teamKeyRefused',
];

describe('audit log: what each role reads (unit)', () => {
  it('the owner reads the workspace, its keys, billing, the collections and their own account; never another subscription', () => {
    expect(visible(entries, reader('owner', OWNER))).to.have.members([
      ...workspaceAndKeys,
      'billing',
      'ownerLogin',
      'ownerPassword',
      'collectionByMember',
      'collectionByTeamKey',
    ] satisfies Kind[]);
  });

  it("an admin reads the workspace and its keys, invitations and single sign-on included, not billing or the owner's account", () => {
    expect(visible(entries, reader('admin', ADMIN))).to.have.members([
      ...workspaceAndKeys,
      'collectionByMember',
      'collectionByTeamKey',
    ] satisfies Kind[]);
  });

  it('a member reads who is in the team, their own key and what they did; nothing else', () => {
    const expected: Kind[] = ['memberJoined', 'memberLeft', 'memberKey', 'memberKeyRefused', 'collectionByMember', 'memberSsoLogin'];
    expect(visible(entries, reader('member', MEMBER, MEMBER_KEY))).to.have.members(expected);
    // Without a key yet, the refusals of their key cannot be theirs; the rest is the same.
    expect(visible(entries, reader('member', MEMBER))).to.have.members(expected.filter((k) => k !== 'memberKeyRefused'));
    // Their own personal log-in is their account's, not the team's; a sign-on through this team's provider
    // is theirs to read here, one through another team's is not.
    expect(visible(entries, reader('member', MEMBER, MEMBER_KEY))).not.to.include('memberLogin');
    expect(visible(entries, reader('member', MEMBER, MEMBER_KEY))).not.to.include('memberSsoElsewhere');
  });

  it('a member reads who joined by account, never by the address they were invited at', () => {
    const joined = entries.find((e) => e.entryId === 'memberJoined')!;
    expect(joined.target).to.equal('member other@example.test');
    const read = asReadBy(joined, { role: 'member' });
    expect(read.target).to.equal(`member ${OTHER_MEMBER}`);
    expect(JSON.stringify(read)).not.to.include('other@example.test');
    expect(asReadBy(joined, { role: 'admin' })).to.equal(joined);
  });

  it('every scope is bound to this subscription or names none', () => {
    for (const role of ['owner', 'admin', 'member'] as const) {
      for (const f of auditScope(reader(role, MEMBER, MEMBER_KEY))) {
        expect([SUB, null], JSON.stringify(f)).to.include(f.subscriptionId);
      }
    }
  });
});
