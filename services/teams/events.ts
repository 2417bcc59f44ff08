import { defineEvent, type EventDefinition } from '../../events/catalog.ts';
import type { Event } from '../../events/envelope.ts';

export const TEAMS_TOPIC = 'teams.events';

/** What a member may do beyond using the team's keys; the owner (the subscription's account) is not a role one is given. */
export type MemberRole = 'admin' | 'member';
export const MEMBER_ROLES: readonly MemberRole[] = ['admin', 'member'];

export interface TeamMemberInvitedData {
  subscriptionId: string;
  invitationId: string;
  /** Normalised: only an account with this e-mail can accept. */
  email: string;
  role: MemberRole;
  /** SHA-256 of the token, hex: what accepting looks the invitation up by. */
  tokenHash: string;
  /** The token under KEY_ENCRYPTION_KEY (invitation-token.ts): only the mailer opens it. */
  encryptedToken: string;
  expiresAt: Date;
  invitedBy: string;
}

export interface TeamInvitationRevokedData {
  subscriptionId: string;
  invitationId: string;
  revokedBy: string;
}

export interface TeamMemberJoinedData {
  subscriptionId: string;
  /** This membership: leaving and joining again makes a new one, so a late event of the old one cannot revive it. */
  membershipId: string;
  userId: string;
  email: string;
  role: MemberRole;
  via: 'invitation' | 'sso';
  invitationId: string | null;
}

export interface TeamMemberRemovedData {
  subscriptionId: string;
  membershipId: string;
  userId: string;
  /** Who removed them; their own user id when they left. */
  removedBy: string;
}

export interface TeamMemberRoleChangedData {
  subscriptionId: string;
  membershipId: string;
  userId: string;
  role: MemberRole;
  changedBy: string;
}

export interface TeamSsoConfiguredData {
  subscriptionId: string;
  issuer: string;
  clientId: string;
  /** The client secret under KEY_ENCRYPTION_KEY, bound to the subscription id. */
  encryptedClientSecret: string;
  /** The e-mail domains whose verified addresses log in through this provider. */
  domains: string[];
  configuredBy: string;
}

export interface TeamSsoRemovedData {
  subscriptionId: string;
  removedBy: string;
}

export interface TeamSsoDomainProofRequestedData {
  subscriptionId: string;
  /** This proof: a resend is a new proof, and the one before it stops counting. */
  proofId: string;
  /** One of the domains the team's SSO configuration names, normalised. */
  domain: string;
  /** The address at that domain the one-time link goes to. */
  address: string;
  /** SHA-256 of the token, hex: what confirming looks the proof up by. */
  tokenHash: string;
  /** The token sealed under KEY_ENCRYPTION_KEY (sso-domain-proof-token.ts): only the mailer opens it. */
  encryptedToken: string;
  expiresAt: Date;
  requestedBy: string;
  /** The owner's address, named in the e-mail so its reader knows whom the link would serve. */
  requestedByEmail: string;
}

export interface TeamSsoDomainVerifiedData {
  subscriptionId: string;
  proofId: string;
  domain: string;
  /** The owner who confirmed the link. */
  verifiedBy: string;
}

export type TeamMemberInvited = Event<'team.member-invited', TeamMemberInvitedData>;
export type TeamInvitationRevoked = Event<'team.invitation-revoked', TeamInvitationRevokedData>;
export type TeamMemberJoined = Event<'team.member-joined', TeamMemberJoinedData>;
export type TeamMemberRemoved = Event<'team.member-removed', TeamMemberRemovedData>;
export type TeamMemberRoleChanged = Event<'team.member-role-changed', TeamMemberRoleChangedData>;
export type TeamSsoConfigured = Event<'team.sso-configured', TeamSsoConfiguredData>;
export type TeamSsoRemoved = Event<'team.sso-removed', TeamSsoRemovedData>;
export type TeamSsoDomainProofRequested = Event<'team.sso-domain-proof-requested', TeamSsoDomainProofRequestedData>;
export type TeamSsoDomainVerified = Event<'team.sso-domain-verified', TeamSsoDomainVerifiedData>;

export type TeamEvent =
  | TeamMemberInvited
  | TeamInvitationRevoked
  | TeamMemberJoined
  | TeamMemberRemoved
  | TeamMemberRoleChanged
  | TeamSsoConfigured
  | TeamSsoRemoved
  | TeamSsoDomainProofRequested
  | TeamSsoDomainVerified;

export const TEAM_EVENT_TYPES: readonly TeamEvent['type'][] = [
  'team.member-invited',
  'team.invitation-revoked',
  'team.member-joined',
  'team.member-removed',
  'team.member-role-changed',
  'team.sso-configured',
  'team.sso-removed',
  'team.sso-domain-proof-requested',
  'team.sso-domain-verified',
];

// Keyed by the workspace (its subscription): one workspace's events stay in order on one partition.
export const TEAM_EVENTS: readonly EventDefinition[] = TEAM_EVENT_TYPES.map((type) =>
  defineEvent<TeamEvent>({ type, topic: TEAMS_TOPIC, schema: `teams/${type}`, key: (d) => d.subscriptionId }),
);
