import type { Express } from 'express';
import { HttpError, badRequest } from '../../platform/http/errors.ts';
import { noStore } from '../../platform/http/no-store.ts';
import { findWorkspace, ownsWorkspace, type Workspace } from '../../teams/workspace.ts';
import type { Db } from 'mongodb';
import { tokenVersionOf, type AccountRecord, type AccountStore } from '../account-store.ts';
import { normalizeEmail } from '../credentials-input.ts';
import { authenticate } from '../session.ts';
import { LINK_TICKET_TTL_MS, sealLinkTicket } from './link-ticket.ts';
import type { OneTimeCodes, PendingLink } from './one-time-codes.ts';
import type { ProviderIdentities, ProviderIdentity } from './provider-identities.ts';
import type { TokenSettings } from '../tokens.ts';
import {
  SSO_CALLBACK_PATH,
  SSO_LINKS_PATH,
  SSO_LINK_FINISH_PATH,
  SSO_LINK_START_PATH,
  SSO_START_PATH,
  type SsoLinkAnswer,
  type SsoLinksAnswer,
  ssoLinkFinishInput,
  ssoLinkStartInput,
} from './sso-input.ts';
import { SsoRefusal, type SsoWorkspace } from './sso-login.ts';

/**
 * Linking an existing account to its team's provider, by the account's owner only, logged in the
 * ordinary way (its password, or a sign-on of an identity already its own):
 *
 * 1. `POST /auth/sso/link/start` (bearer token, the console's binding hash) answers where to send the
 *    browser: `GET /auth/sso/start?link=<ticket>`, the ticket sealing the session's account (link-ticket.ts).
 * 2. The browser signs in at the team's provider (found by the account's own address, among proven
 *    domains); the callback checks the answer (linkableBy) and hands the console a link code, bound to
 *    the browser that started, as a sign-on's code is.
 * 3. `POST /auth/sso/link/finish` (the code and the binding secret) records the identity (iss, sub) on
 *    the account the ticket named, with `account.sso-linked`.
 *
 * *Rule:* the provider's verified address must be the account's own and of one of the team's proven
 * domains; the account must be the team's member or owner; one identity names one account. From then
 * on a sign-on asserting that identity through that team opens the account, and nothing else about
 * the provider does. `GET /auth/sso/links` lists them; `DELETE /auth/sso/links/{id}` unlinks one the
 * owner linked (not the identity single sign-on made the account with: that is its only way in).
 */

/** What the link routes use of the sign-on's (sso.routes.ts's SsoRouteDeps). */
export interface SsoLinkDeps {
  db: Db;
  store: AccountStore;
  identities: ProviderIdentities;
  codes: OneTimeCodes;
  tokens: TokenSettings;
  /** The redirect URI at the providers: the start is beside it. */
  callbackUrl: string;
}

const inTeam = (workspace: Workspace, account: AccountRecord): boolean =>
  ownsWorkspace(workspace, account) || workspace.members.some((m) => m.userId === account.userId);

/**
 * What a link flow's answer would record, checked at the callback (so the browser hears why at once)
 * and again at the finish: or the refusal. The account's owner is the one asking, so these refusals
 * may say what is wrong with the account's own link.
 */
export async function linkableBy(
  deps: Pick<SsoLinkDeps, 'store' | 'identities'>,
  found: SsoWorkspace,
  link: { userId: string; tokenVersion: number },
  asserted: { issuer: string; subject: string; email: string },
): Promise<PendingLink> {
  const account = await deps.store.findById(link.userId);
  if (!account || tokenVersionOf(account) !== link.tokenVersion)
    throw new SsoRefusal('flow_expired', 'the session that started this link is over: log in and start again');
  if (normalizeEmail(account.email) !== asserted.email)
    throw new SsoRefusal('link_mismatch', 'your team’s provider signed in another address than your account’s');
  if (!inTeam(found.workspace, account)) throw new SsoRefusal('link_not_member', 'your account is not in this team');
  const holder = await deps.identities.find(asserted.issuer, asserted.subject);
  if (holder && holder.userId !== account.userId)
    throw new SsoRefusal('link_taken', 'this sign-on is linked to another svc account already');
  return {
    issuer: asserted.issuer,
    subject: asserted.subject,
    subscriptionId: found.workspace.subscriptionId,
    tokenVersion: link.tokenVersion,
  };
}

const answerOf = (identity: ProviderIdentity): SsoLinkAnswer => ({
  id: identity._id,
  issuer: identity.issuer,
  subscriptionId: identity.subscriptionId,
  via: identity.via,
  linkedAt: new Date(identity.linkedAt).toISOString(),
});

const FINISH_REFUSALS: Partial<Record<SsoRefusal['code'], { status: number; code: string }>> = {
  flow_expired: { status: 401, code: 'INVALID_CODE' },
  link_mismatch: { status: 403, code: 'EMAIL_MISMATCH' },
  link_not_member: { status: 403, code: 'NOT_A_MEMBER' },
  link_taken: { status: 409, code: 'IDENTITY_TAKEN' },
  no_team: { status: 409, code: 'NO_TEAM' },
};

export function mountSsoLinkRoutes(app: Express, deps: SsoLinkDeps): void {
  const startUrl = `${deps.callbackUrl.slice(0, deps.callbackUrl.length - SSO_CALLBACK_PATH.length)}${SSO_START_PATH}`;

  app.post(SSO_LINK_START_PATH, noStore, async (req, res) => {
    const { account } = await authenticate(req, deps.tokens, deps.store);
    const parsed = ssoLinkStartInput.safeParse(req.body);
    if (!parsed.success) throw badRequest('binding: the SHA-256 (base64url) of the browser binding secret is required');
    const ticket = sealLinkTicket(deps.tokens.secret, {
      userId: account.userId,
      tokenVersion: tokenVersionOf(account),
      binding: parsed.data.binding,
      expiresAt: Date.now() + LINK_TICKET_TTL_MS,
    });
    res.json({ location: `${startUrl}?${new URLSearchParams({ link: ticket, return: 'console', binding: parsed.data.binding })}` });
  });

  app.post(SSO_LINK_FINISH_PATH, noStore, async (req, res) => {
    const parsed = ssoLinkFinishInput.safeParse(req.body);
    if (!parsed.success) throw badRequest(parsed.error.issues[0]?.message ?? 'code is required');
    const invalid = () =>
      new HttpError(401, 'INVALID_CODE', 'the link code is unknown, expired, already used, or not this browser’s: start the link again');
    const redeemed = await deps.codes.redeemAny(parsed.data.code, parsed.data.binding);
    if (!redeemed?.link) throw invalid();
    const { link, userId } = redeemed;
    // Checked again as it is now: the team, its membership and the account may have changed since the callback.
    const workspace = await findWorkspace(deps.db, link.subscriptionId);
    const account = await deps.store.findById(userId);
    if (!workspace?.sso || !account) throw invalid();
    try {
      await linkableBy(
        deps,
        { workspace, sso: workspace.sso },
        { userId, tokenVersion: link.tokenVersion },
        {
          issuer: link.issuer,
          subject: link.subject,
          email: normalizeEmail(account.email),
        },
      );
    } catch (err) {
      const known = err instanceof SsoRefusal ? FINISH_REFUSALS[err.code] : undefined;
      if (!known || !(err instanceof SsoRefusal)) throw err;
      throw new HttpError(known.status, known.code, err.message);
    }
    const claimed = await deps.identities.claim(
      { issuer: link.issuer, subject: link.subject, userId, subscriptionId: link.subscriptionId, via: 'link' },
      req.id,
    );
    if (claimed === 'taken') throw new HttpError(409, 'IDENTITY_TAKEN', 'this sign-on is linked to another svc account already');
    const identity = await deps.identities.find(link.issuer, link.subject);
    if (!identity) throw invalid();
    res.json(answerOf(identity));
  });

  app.get(SSO_LINKS_PATH, noStore, async (req, res) => {
    const { account } = await authenticate(req, deps.tokens, deps.store);
    res.json({ links: (await deps.identities.ofAccount(account.userId)).map(answerOf) } satisfies SsoLinksAnswer);
  });

  app.delete(`${SSO_LINKS_PATH}/:id`, noStore, async (req, res) => {
    const { account } = await authenticate(req, deps.tokens, deps.store);
    const id = String(req.params.id);
    if (!/^[0-9a-f]{64}$/.test(id)) throw new HttpError(404, 'NOT_FOUND', 'no such link on this account');
    const result = await deps.identities.unlink(account.userId, id, req.id);
    if (result === 'busy') throw new HttpError(409, 'CONFLICT', 'the link changed meanwhile, or is still being recorded; retry');
    if (result === 'none')
      throw new HttpError(404, 'NOT_FOUND', 'no such link on this account (a link single sign-on made the account with cannot be removed)');
    res.status(204).end();
  });
}
