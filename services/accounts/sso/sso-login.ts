import { randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';
import type * as oidc from 'openid-client';
import { applyEvents } from '../../../events/projection.ts';
import { projectionCollection } from '../../../events/collections.ts';
import type { EventPublisher } from '../../../events/publisher.ts';
import { joinWorkspace } from '../../teams/join.ts';
import { openClientSecret } from '../../teams/sso-secret.ts';
import { discoverProvider } from '../../teams/sso-provider.ts';
import { findWorkspace, ownsWorkspace, type Workspace } from '../../teams/workspace.ts';
import { MAX_MEMBERS } from '../../teams/workspaces.projection.ts';
import type { AccountRecord, AccountStore } from '../account-store.ts';
import { normalizeEmail } from '../credentials-input.ts';
import { NAME_MAX_LENGTH, cleanName, containsLink } from '../display-name.ts';
import type { Passwords } from '../password.ts';
import { issueVerification } from '../email-verification.ts';
import { usersProjection } from '../users.projection.ts';
import { emailInDomains } from './email-domain.ts';
import type { ProviderIdentities } from './provider-identities.ts';

/**
 * The steps of a team member's single sign-on that are not HTTP: the provider's client for a
 * workspace, and what a verified identity becomes here (an account, a membership). Each refusal is
 * an SsoRefusal whose code the console turns into its page; none carries a secret or what the
 * provider wrote, and none tells whether an account has an address (notLinked). The link_* codes
 * answer only a logged-in account's owner linking it (sso-link.routes.ts).
 */

export type RefusalCode =
  | 'bad_request'
  | 'no_team'
  | 'provider_unavailable'
  | 'flow_expired'
  | 'state_mismatch'
  | 'provider_refused'
  | 'email_missing'
  | 'email_unverified'
  | 'wrong_domain'
  | 'not_linked'
  | 'link_mismatch'
  | 'link_not_member'
  | 'link_taken'
  | 'workspace_full'
  | 'rate_limited'
  | 'unavailable';

export class SsoRefusal extends Error {
  readonly code: RefusalCode;
  constructor(code: RefusalCode, message: string) {
    super(message);
    this.name = 'SsoRefusal';
    this.code = code;
  }
}

/** A workspace that has single sign-on, with its provider settings opened. */
export interface SsoWorkspace {
  workspace: Workspace;
  sso: NonNullable<Workspace['sso']>;
}

export async function ssoWorkspace(db: Db, subscriptionId: string): Promise<SsoWorkspace> {
  const workspace = await findWorkspace(db, subscriptionId);
  if (!workspace?.sso) throw new SsoRefusal('no_team', 'this team does not use single sign-on (any more)');
  return { workspace, sso: workspace.sso };
}

/**
 * The domains a sign-on of this team may vouch for: those the team proved (a workspace written
 * before proofs existed has proven none). What the owner merely configured counts for nothing.
 */
export const provenDomainsOf = (found: SsoWorkspace): readonly string[] => found.sso.provenDomains ?? [];

/** The provider's client for the workspace: discovered each time, so a changed configuration applies at once. */
export async function providerOf(found: SsoWorkspace, encryptionKey: Buffer, allowLocal: boolean): Promise<oidc.Configuration> {
  const clientSecret = openClientSecret(found.sso.encryptedClientSecret, encryptionKey, found.workspace.subscriptionId);
  try {
    return await discoverProvider({ issuer: found.sso.issuer, clientId: found.sso.clientId, clientSecret, allowLocal });
  } catch {
    throw new SsoRefusal('provider_unavailable', "your team's sign-in provider cannot be reached right now");
  }
}

/** The verified work address the ID token vouches for, or why not. */
export function verifiedEmail(claims: oidc.IDToken | undefined, domains: readonly string[]): string {
  const email = claims?.email;
  if (typeof email !== 'string' || email.trim() === '')
    throw new SsoRefusal('email_missing', "your team's provider did not say your e-mail address");
  // Only a literal true: "true" as a string, or an absent claim, is not a provider vouching for it.
  if (claims?.email_verified !== true)
    throw new SsoRefusal('email_unverified', "your team's provider has not verified your e-mail address");
  const normalized = normalizeEmail(email);
  if (!emailInDomains(normalized, domains))
    throw new SsoRefusal('wrong_domain', "your e-mail address is not of one of your team's domains");
  return normalized;
}

/** A display name from the token's `name` when it is one a sign-up would take, else the address's local part. */
export function displayNameOf(claims: oidc.IDToken | undefined, email: string): string {
  const given = typeof claims?.name === 'string' ? cleanName(claims.name) : '';
  if (given.length > 0 && given.length <= NAME_MAX_LENGTH && !containsLink(given)) return given;
  // Dots become spaces: a name that reads as a domain would be a link in the welcome e-mail.
  const local = cleanName(email.slice(0, email.lastIndexOf('@')).replace(/[._+]+/g, ' ')).slice(0, NAME_MAX_LENGTH);
  return local.length > 0 && !containsLink(local) ? local : 'Team member';
}

export interface MemberDeps {
  db: Db;
  store: AccountStore;
  identities: Pick<ProviderIdentities, 'find' | 'claim' | 'ofAccount'>;
  passwords: Pick<Passwords, 'hash'>;
  publisher: Pick<EventPublisher, 'publishOrdered'>;
  /** KEY_ENCRYPTION_KEY: seals a new account's verification link for the mailer. */
  encryptionKey: Buffer;
}

/** Who the provider says signed in: its issuer and subject (what a sign-on matches), and the verified address. */
export interface AssertedIdentity {
  issuer: string;
  subject: string;
  email: string;
  name: string;
}

/** The provider's identity in the ID token: openid-client checked `iss` against the team's issuer already. */
export function identityOf(claims: oidc.IDToken | undefined): { issuer: string; subject: string } {
  const issuer = claims?.iss;
  const subject = claims?.sub;
  if (typeof issuer !== 'string' || issuer === '' || typeof subject !== 'string' || subject === '' || subject.length > 255)
    throw new SsoRefusal('provider_refused', 'your team’s provider did not confirm this sign-in');
  return { issuer, subject };
}

/**
 * One refusal for every sign-on that names no account this provider may open: an address that has an
 * account not linked to this identity, an identity linked through another team, a linked member who
 * left the team. The same code and words whichever it is, so what the caller (and the provider's
 * owner, who chooses what it asserts) learns is not whether an account has that address.
 */
export const notLinked = (): SsoRefusal =>
  new SsoRefusal(
    'not_linked',
    'this sign-on is not linked to an svc account: if you have one, log in the ordinary way and link your team’s sign-on from your account',
  );

/**
 * The account a sign-on opens: the one the provider identity (iss, sub) is recorded on, never one
 * matched by its e-mail; made (recording the identity) when the address has no account.
 *
 * *Rule:* a provider's say-so opens only an account that this team's provider made for this very
 * identity, or that its owner linked to it after logging in the ordinary way (sso-link.routes.ts). An
 * existing account with a password, or one another provider (or none) made, is refused: the team's
 * owner chooses the provider and what it asserts, and would otherwise sign in as any of its members.
 * A linked account (not one sign-on made) opens only while it is the team's member or owner: leaving
 * or being removed ends what the team's provider can do with it.
 */
export async function signOnAccount(
  deps: MemberDeps,
  found: SsoWorkspace,
  asserted: AssertedIdentity,
  correlationId: string,
): Promise<AccountRecord> {
  const { workspace } = found;
  const team = workspace.subscriptionId;
  const linked = await deps.identities.find(asserted.issuer, asserted.subject);
  if (linked) {
    if (linked.subscriptionId !== team) throw notLinked();
    const account = await deps.store.findById(linked.userId);
    if (!account) throw notLinked();
    if (linked.via === 'link' && !ownsWorkspace(workspace, account) && !workspace.members.some((m) => m.userId === account.userId))
      throw notLinked();
    await join(deps, workspace, account, correlationId);
    return account;
  }
  const existing = await deps.store.findByEmail(asserted.email);
  if (existing) {
    await recordMadeIdentity(deps, team, existing, asserted, correlationId);
    await join(deps, workspace, existing, correlationId);
    return existing;
  }
  if (workspace.members.length >= MAX_MEMBERS) throw new SsoRefusal('workspace_full', `this team has ${MAX_MEMBERS} members, its most`);
  // No usable password: the hash of 32 random bytes nobody ever sees (the account signs in through its
  // provider, as the identity recorded here at its making).
  const passwordHash = await deps.passwords.hash(randomBytes(32).toString('base64url'));
  const made = { subscriptionId: team, issuer: asserted.issuer, subject: asserted.subject };
  const result = await deps.store.register(
    {
      email: asserted.email,
      name: asserted.name,
      passwordHash,
      sso: made,
      emailVerified: false,
      verification: issueVerification(deps.encryptionKey, asserted.email),
    },
    correlationId,
  );
  if (result.status === 'unavailable')
    throw new SsoRefusal('unavailable', 'your account could not be recorded right now; try again in a moment');
  if (result.status === 'taken') {
    // A sign-up or another sign-on of the same address won the race: judge that account instead.
    return signOnAccount(deps, found, asserted, correlationId);
  }
  if (result.position) {
    await applyEvents(await projectionCollection(deps.db, usersProjection.collection), usersProjection, [
      { ...result.event, position: result.position },
    ]);
  }
  const account = await deps.store.findByEmail(asserted.email);
  if (!account) throw new SsoRefusal('unavailable', 'your account could not be read back; try again in a moment');
  await recordMadeIdentity(deps, team, account, asserted, correlationId);
  await join(deps, workspace, account, correlationId);
  return account;
}

/**
 * Records the identity on an account this team's sign-on made, when it is the identity the account
 * was made for: just made, or made and its record interrupted. An account made before identities were
 * recorded (its `sso` names no subject) and never given one takes the first identity its own team's
 * provider asserts: that provider made it. Any other account is refused (notLinked).
 */
async function recordMadeIdentity(
  deps: MemberDeps,
  team: string,
  account: AccountRecord,
  asserted: AssertedIdentity,
  correlationId: string,
): Promise<void> {
  const made = account.sso;
  if (!made || made.subscriptionId !== team) throw notLinked();
  if (made.subject !== undefined) {
    if (made.issuer !== asserted.issuer || made.subject !== asserted.subject) throw notLinked();
  } else if ((await deps.identities.ofAccount(account.userId)).length > 0) {
    throw notLinked();
  }
  const claimed = await deps.identities.claim(
    { issuer: asserted.issuer, subject: asserted.subject, userId: account.userId, subscriptionId: team, via: 'made' },
    correlationId,
  );
  if (claimed === 'taken') throw notLinked();
}

async function join(deps: MemberDeps, workspace: Workspace, account: AccountRecord, correlationId: string): Promise<void> {
  if (ownsWorkspace(workspace, account) || workspace.members.some((m) => m.userId === account.userId)) return;
  const member = await joinWorkspace(
    { db: deps.db, publisher: deps.publisher },
    {
      subscriptionId: workspace.subscriptionId,
      userId: account.userId,
      email: account.email,
      role: 'member',
      via: 'sso',
      invitationId: null,
    },
    { correlationId },
  );
  if (!member) throw new SsoRefusal('workspace_full', `this team has ${MAX_MEMBERS} members, its most`);
}
