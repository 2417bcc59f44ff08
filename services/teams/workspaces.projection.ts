import type { Db } from 'mongodb';
import { projectionCollection } from '../../events/collections.ts';
import { findProjected, type Projection, type StoredDocument } from '../../events/projection.ts';
import { TEAM_EVENT_TYPES, type MemberRole, type TeamEvent } from './events.ts';

export interface Member {
  membershipId: string;
  userId: string;
  email: string;
  role: MemberRole;
  joinedAt: Date;
  via: 'invitation' | 'sso';
}

export interface Invitation {
  invitationId: string;
  email: string;
  role: MemberRole;
  tokenHash: string;
  invitedBy: string;
  invitedAt: Date;
  expiresAt: Date;
  status: 'pending' | 'accepted' | 'revoked';
}

/** A one-time link mailed to an address at a domain, to prove the team controls that domain. */
export interface DomainProof {
  proofId: string;
  domain: string;
  address: string;
  tokenHash: string;
  requestedBy: string;
  requestedAt: Date;
  expiresAt: Date;
  /** superseded: a newer proof for the same domain was asked for; used: confirmed (the domain is proven). */
  status: 'pending' | 'used' | 'superseded';
}

export interface SsoSettings {
  issuer: string;
  clientId: string;
  encryptedClientSecret: string;
  /** What the owner configured. */
  domains: string[];
  /** Those of `domains` whose proof was confirmed: the only ones sign-on and teamByDomain go by. */
  provenDomains: string[];
  /** The domains' proofs, newest last (a few per domain at most). */
  proofs: DomainProof[];
  configuredBy: string;
  configuredAt: Date;
}

/**
 * The people side of a team subscription: its members, its invitations and its single sign-on.
 * Who owns it and what it grants are the subscription's (the keys projection): workspace.ts joins them.
 */
export interface TeamRecord {
  subscriptionId: string;
  members: Member[];
  invitations: Invitation[];
  /** Memberships that ended: a join arriving again for one of them (a retried publish) is not a new member. */
  ended: string[];
  sso: SsoSettings | null;
}

/** Invitations no longer pending are kept this many at most (the newest), so the document stays small. */
const SETTLED_INVITATIONS_KEPT = 50;
/** Proofs kept per workspace (the newest): every configured domain's pending one fits, with room. */
const DOMAIN_PROOFS_KEPT = 30;
const ENDED_MEMBERSHIPS_KEPT = 500;
/** A workspace's members: every member is a key, an e-mail and a row here. */
export const MAX_MEMBERS = 100;

const empty = (subscriptionId: string): TeamRecord => ({ subscriptionId, members: [], invitations: [], ended: [], sso: null });

/** The invitations with all pending ones and the newest settled ones only. */
function trimmed(invitations: Invitation[]): Invitation[] {
  const settled = invitations.filter((i) => i.status !== 'pending');
  if (settled.length <= SETTLED_INVITATIONS_KEPT) return invitations;
  const drop = new Set(settled.slice(0, settled.length - SETTLED_INVITATIONS_KEPT).map((i) => i.invitationId));
  return invitations.filter((i) => !drop.has(i.invitationId));
}

/** Settles one pending invitation (accepted or revoked). */
const settle = (invitations: Invitation[], invitationId: string | null, status: Invitation['status']): Invitation[] =>
  trimmed(invitations.map((i) => (i.invitationId === invitationId && i.status === 'pending' ? { ...i, status } : i)));

/**
 * The pending invitations that end with someone's place in the workspace. A membership that ends
 * (removed, or left) ends those to the member's address and those the member sent: neither may bring
 * them, or an address of theirs, back in. A demotion to member ends those they sent: inviting was the
 * admin's. Used by the projection (the rule) and by the routes (to record each withdrawal).
 */
export function invitationsEndingWith(
  invitations: readonly Invitation[],
  person: { userId: string; email: string },
  ending: 'membership' | 'admin-role',
): Invitation[] {
  const address = person.email.trim().toLowerCase();
  return invitations.filter(
    (i) => i.status === 'pending' && (i.invitedBy === person.userId || (ending === 'membership' && i.email === address)),
  );
}

/** Revokes these pending invitations. */
const withdraw = (invitations: Invitation[], ending: readonly Invitation[]): Invitation[] => {
  if (ending.length === 0) return invitations;
  const ids = new Set(ending.map((i) => i.invitationId));
  return trimmed(invitations.map((i) => (ids.has(i.invitationId) && i.status === 'pending' ? { ...i, status: 'revoked' as const } : i)));
};

export function evolveTeam(doc: TeamRecord | null, event: TeamEvent): TeamRecord {
  const current = doc ?? empty(event.data.subscriptionId);
  const at = event.metadata.occurredAt;
  switch (event.type) {
    case 'team.member-invited': {
      const d = event.data;
      if (current.invitations.some((i) => i.invitationId === d.invitationId)) return current;
      // A new invitation to the same address replaces a pending one: one live link per person.
      const invitations = current.invitations.map((i) =>
        i.email === d.email && i.status === 'pending' ? { ...i, status: 'revoked' as const } : i,
      );
      const invitation: Invitation = {
        invitationId: d.invitationId,
        email: d.email,
        role: d.role,
        tokenHash: d.tokenHash,
        invitedBy: d.invitedBy,
        invitedAt: at,
        expiresAt: d.expiresAt,
        status: 'pending',
      };
      return { ...current, invitations: trimmed([...invitations, invitation]) };
    }
    case 'team.invitation-revoked':
      return { ...current, invitations: settle(current.invitations, event.data.invitationId, 'revoked') };
    case 'team.member-joined': {
      const d = event.data;
      // Two accepts of one link, or a user who is already in: the first join stands.
      if (
        current.ended.includes(d.membershipId) ||
        current.members.some((m) => m.userId === d.userId || m.membershipId === d.membershipId)
      ) {
        return current;
      }
      // Only a pending invitation, before it expires, lets someone in (the route checks it too; this holds in a replay).
      if (
        d.invitationId !== null &&
        !current.invitations.some((i) => i.invitationId === d.invitationId && i.status === 'pending' && at <= i.expiresAt)
      ) {
        return current;
      }
      if (current.members.length >= MAX_MEMBERS) return current;
      const member: Member = { membershipId: d.membershipId, userId: d.userId, email: d.email, role: d.role, joinedAt: at, via: d.via };
      return { ...current, members: [...current.members, member], invitations: settle(current.invitations, d.invitationId, 'accepted') };
    }
    case 'team.member-removed': {
      const d = event.data;
      if (!current.members.some((m) => m.membershipId === d.membershipId)) {
        return current.ended.includes(d.membershipId)
          ? current
          : { ...current, ended: [...current.ended, d.membershipId].slice(-ENDED_MEMBERSHIPS_KEPT) };
      }
      const leaving = current.members.find((m) => m.membershipId === d.membershipId);
      return {
        ...current,
        members: current.members.filter((m) => m.membershipId !== d.membershipId),
        ended: [...current.ended, d.membershipId].slice(-ENDED_MEMBERSHIPS_KEPT),
        // Whatever the route did: no invitation to them or from them outlives the membership.
        invitations: leaving
          ? withdraw(current.invitations, invitationsEndingWith(current.invitations, leaving, 'membership'))
          : current.invitations,
      };
    }
    case 'team.member-role-changed': {
      const d = event.data;
      const demoted =
        d.role === 'member' ? current.members.find((m) => m.membershipId === d.membershipId && m.role === 'admin') : undefined;
      return {
        ...current,
        members: current.members.map((m) => (m.membershipId === d.membershipId ? { ...m, role: d.role } : m)),
        invitations: demoted
          ? withdraw(current.invitations, invitationsEndingWith(current.invitations, demoted, 'admin-role'))
          : current.invitations,
      };
    }
    case 'team.sso-configured': {
      const d = event.data;
      // A proof is about the domain, not the provider: a domain still named keeps it, a domain dropped
      // loses it (and its pending link), so naming it again needs a new proof. Documents written before
      // proofs existed have neither list: nothing proven.
      const before = current.sso;
      return {
        ...current,
        sso: {
          issuer: d.issuer,
          clientId: d.clientId,
          encryptedClientSecret: d.encryptedClientSecret,
          domains: d.domains,
          provenDomains: (before?.provenDomains ?? []).filter((domain) => d.domains.includes(domain)),
          proofs: (before?.proofs ?? []).filter((p) => d.domains.includes(p.domain)),
          configuredBy: d.configuredBy,
          configuredAt: at,
        },
      };
    }
    case 'team.sso-removed':
      return { ...current, sso: null };
    case 'team.sso-domain-proof-requested': {
      const d = event.data;
      const sso = current.sso;
      // Only for a domain the configuration names now (the route checks it too; this holds in a replay).
      if (!sso?.domains.includes(d.domain)) return current;
      const proofs = sso.proofs ?? [];
      if (proofs.some((p) => p.proofId === d.proofId)) return current;
      // One live link per domain: a resend supersedes the link before it.
      const kept = proofs.map((p) => (p.domain === d.domain && p.status === 'pending' ? { ...p, status: 'superseded' as const } : p));
      const proof: DomainProof = {
        proofId: d.proofId,
        domain: d.domain,
        address: d.address,
        tokenHash: d.tokenHash,
        requestedBy: d.requestedBy,
        requestedAt: at,
        expiresAt: d.expiresAt,
        status: 'pending',
      };
      return { ...current, sso: { ...sso, provenDomains: sso.provenDomains ?? [], proofs: [...kept, proof].slice(-DOMAIN_PROOFS_KEPT) } };
    }
    case 'team.sso-domain-verified': {
      const d = event.data;
      const sso = current.sso;
      if (!sso?.domains.includes(d.domain)) return current;
      const proofs = sso.proofs ?? [];
      // Only the domain's pending proof, confirmed before it expired, proves it: a superseded, used or
      // unknown proof, or one for a domain dropped since, proves nothing.
      const proof = proofs.find((p) => p.proofId === d.proofId);
      if (!proof || proof.domain !== d.domain || proof.status !== 'pending' || at > proof.expiresAt) return current;
      const proven = sso.provenDomains ?? [];
      return {
        ...current,
        sso: {
          ...sso,
          provenDomains: proven.includes(d.domain) ? proven : [...proven, d.domain],
          proofs: proofs.map((p) => (p.proofId === d.proofId ? { ...p, status: 'used' as const } : p)),
        },
      };
    }
    default: {
      const unhandled: never = event;
      throw new Error(`workspaces projection: unhandled event ${(unhandled as { type: string }).type}`);
    }
  }
}

type TeamDocument = TeamRecord & Record<string, unknown>;
/** A workspace as stored: the record with the projection's bookkeeping, read back through the typed collection. */
type StoredTeam = StoredDocument<TeamRecord>;

export const workspacesProjection: Projection<TeamDocument, TeamEvent> = {
  name: 'workspaces',
  collection: 'workspaces',
  handles: TEAM_EVENT_TYPES,
  documentId: (event) => event.data.subscriptionId,
  evolve: (doc, event) => ({ ...evolveTeam(doc, event) }),
  indexes: [
    { key: { 'members.userId': 1 } },
    { key: { 'invitations.tokenHash': 1 } },
    { key: { 'sso.domains': 1 } },
    { key: { 'sso.provenDomains': 1 } },
    { key: { 'sso.proofs.tokenHash': 1 } },
  ],
};

export async function findTeam(db: Db, subscriptionId: string): Promise<TeamRecord | null> {
  return findProjected<TeamRecord>(await projectionCollection(db, workspacesProjection.collection), subscriptionId);
}

/** The workspaces this account is a member of (not those it owns: those are its subscriptions). */
const teams = (db: Db) => projectionCollection<StoredTeam>(db, workspacesProjection.collection);

export async function teamsOfMember(db: Db, userId: string): Promise<TeamRecord[]> {
  return (await teams(db))
    .find({ 'members.userId': userId, _deleted: { $ne: true } })
    .limit(100)
    .toArray();
}

export async function teamByInvitationToken(db: Db, tokenHash: string): Promise<TeamRecord | null> {
  return (await teams(db)).findOne({ 'invitations.tokenHash': tokenHash, _deleted: { $ne: true } });
}

/** The team that proved the domain (one at most: proving claims it atomically, sso-domain-claims.ts); a domain only configured matches nothing. */
export async function teamByDomain(db: Db, domain: string): Promise<TeamRecord | null> {
  return (await teams(db)).findOne({ 'sso.provenDomains': domain, _deleted: { $ne: true } });
}

/** The team holding a domain proof with this token hash (pending or not: the caller says why it cannot be used). */
export async function teamByDomainProofToken(db: Db, tokenHash: string): Promise<TeamRecord | null> {
  return (await teams(db)).findOne({ 'sso.proofs.tokenHash': tokenHash, _deleted: { $ne: true } });
}
