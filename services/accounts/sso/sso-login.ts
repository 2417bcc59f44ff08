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
import { usersProjection } from '../users.projection.ts';
import { emailInDomains } from './email-domain.ts';

/**
 * The steps of a team member's single sign-on that are not HTTP: the provider's client for a
 * workspace, and what a verified identity becomes here (an account, a membership). Each refusal is
 * an SsoRefusal whose code the console turns into its page; none carries a secret or what the
 * provider wrote.
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
  | 'account_exists'
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
  passwords: Pick<Passwords, 'hash'>;
  publisher: Pick<EventPublisher, 'publishOrdered'>;
}

/**
 * The account a verified address signs in to, made if there is none, and in the workspace.
 *
 * *Choice:* an account that already exists is signed in only when it is already this workspace's
 * (its owner, a member, or made by this team's sign-on). svc does not check that a team owns the
 * domains it names, nor what its provider asserts: matching any existing account would let whoever
 * configures a provider first for a domain sign in as every account of that domain. Such an account
 * joins by invitation (or its owner adds it); from then on it signs in through the provider too.
 */
export async function memberAccount(
  deps: MemberDeps,
  found: SsoWorkspace,
  email: string,
  name: string,
  correlationId: string,
): Promise<AccountRecord> {
  const { workspace } = found;
  const existing = await deps.store.findByEmail(email);
  if (existing) {
    const ours =
      ownsWorkspace(workspace, existing) ||
      workspace.members.some((m) => m.userId === existing.userId) ||
      existing.sso?.subscriptionId === workspace.subscriptionId;
    if (!ours)
      throw new SsoRefusal(
        'account_exists',
        'an svc account with this e-mail exists and is not in this team yet: log in with its password and accept an invitation from your team',
      );
    await join(deps, workspace, existing, correlationId);
    return existing;
  }
  if (workspace.members.length >= MAX_MEMBERS) throw new SsoRefusal('workspace_full', `this team has ${MAX_MEMBERS} members, its most`);
  // No usable password: the hash of 32 random bytes nobody ever sees (the account signs in through its
  // provider; "forgot password" would be the way to give it one).
  const passwordHash = await deps.passwords.hash(randomBytes(32).toString('base64url'));
  const result = await deps.store.register({ email, name, passwordHash, sso: { subscriptionId: workspace.subscriptionId } }, correlationId);
  if (result.status === 'unavailable')
    throw new SsoRefusal('unavailable', 'your account could not be recorded right now; try again in a moment');
  if (result.status === 'taken') {
    // A sign-up or another sign-on of the same address won the race: judge that account instead.
    return memberAccount(deps, found, email, name, correlationId);
  }
  if (result.position) {
    await applyEvents(await projectionCollection(deps.db, usersProjection.collection), usersProjection, [
      { ...result.event, position: result.position },
    ]);
  }
  const account = await deps.store.findByEmail(email);
  if (!account) throw new SsoRefusal('unavailable', 'your account could not be read back; try again in a moment');
  await join(deps, workspace, account, correlationId);
  return account;
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
