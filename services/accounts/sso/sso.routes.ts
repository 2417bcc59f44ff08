import type { Express, Request, Response } from 'express';
import type { Db } from 'mongodb';
import * as oidc from 'openid-client';
import type { EventPublisher } from '../../../events/publisher.ts';
import { HttpError, badRequest } from '../../platform/http/errors.ts';
import { clientIpKey } from '../../platform/http/client-ip.ts';
import { noStore } from '../../platform/http/no-store.ts';
import { keysEqualConstantTime } from '../../platform/secrets.ts';
import { teamByDomain } from '../../teams/workspaces.projection.ts';
import { tokenVersionOf, type AccountStore } from '../account-store.ts';
import { normalizeEmail } from '../credentials-input.ts';
import type { LoginRecords } from '../login-records.ts';
import type { Passwords } from '../password.ts';
import type { TokenSettings } from '../tokens.ts';
import { sessionFor } from '../session-answer.ts';
import { domainOf } from './email-domain.ts';
import { FLOW_COOKIE, FLOW_TTL_MS, flowCookieHeader, openFlow, sealFlow, type SsoFlow } from './flow-cookie.ts';
import type { OneTimeCodes } from './one-time-codes.ts';
import { openLinkTicket } from './link-ticket.ts';
import type { ProviderIdentities } from './provider-identities.ts';
import { SSO_CALLBACK_PATH, SSO_EXCHANGE_PATH, SSO_START_PATH, ssoCallbackQuery, ssoExchangeInput, ssoStartQuery } from './sso-input.ts';
import { linkableBy, mountSsoLinkRoutes } from './sso-link.routes.ts';
import {
  SsoRefusal,
  displayNameOf,
  identityOf,
  provenDomainsOf,
  providerOf,
  signOnAccount,
  ssoWorkspace,
  verifiedEmail,
} from './sso-login.ts';

export interface SsoRouteDeps {
  db: Db;
  store: AccountStore;
  /** The provider identities recorded on accounts: what a sign-on matches. */
  identities: ProviderIdentities;
  passwords: Pick<Passwords, 'hash'>;
  publisher: Pick<EventPublisher, 'publishOrdered'>;
  logins: Pick<LoginRecords, 'record'>;
  codes: OneTimeCodes;
  tokens: TokenSettings;
  /** KEY_ENCRYPTION_KEY: opens the team's client secret. */
  encryptionKey: Buffer;
  /** The redirect URI registered at the providers (ACCOUNTS_PUBLIC_URL/auth/sso/callback). */
  callbackUrl: string;
  /** Where the browser goes back to: the console (CONSOLE_PUBLIC_URL). */
  consoleUrl: string;
  /** Providers on this machine or a private network may be reached (SSO_ALLOW_HTTP_ISSUERS; never in production). */
  allowLocalProviders: boolean;
  /**
   * Takes one sign-on start for the client's address; false when it has had its share. Each start asks
   * the team's provider for its metadata: anyone can call the route, so it must not be a way to make
   * svc call a provider without bound.
   */
  admitStart: (ipKey: string) => Promise<boolean>;
}

/**
 * A team member's OpenID Connect sign-on, on the accounts service (authorization code with PKCE S256,
 * state and nonce, through openid-client):
 *
 * - `GET /auth/sso/start?email=` finds the team by the address's domain among the domains teams
 *   proved (never by a subscription id: those are sequential), seals the flow into a cookie
 *   (flow-cookie.ts; nothing stays in this process) and sends the browser to the team's provider.
 *   `?link=` does the same for the logged-in account a link ticket names (sso-link.routes.ts).
 * - `GET /auth/sso/callback` (the provider's redirect) checks the state, redeems the code with the
 *   verifier and the nonce, wants a verified e-mail of one of the team's proven domains, and opens the
 *   account the provider identity (iss, sub) is recorded on (made, with the identity, and made a
 *   member, when the address has no account; sso-login.ts), records the log-in and hands the console
 *   a one-time code. A link flow's code records the identity instead (POST /auth/sso/link/finish).
 * - `POST /auth/sso/exchange` is the console's server turning that code into the session token; the
 *   token is never in a URL.
 *
 * *Choice:* every answer of the start is the same shape: 303, no body, a Set-Cookie of the flow cookie
 * (the sealed flow, or its deletion) and a Location, which is the team's provider or the console's
 * /sso/complete with a refusal. Only the Location differs, as it must for the person to reach their
 * provider; the team's id never reaches it (docs/security-and-tenancy.md).
 *
 * The browser routes answer every refusal by sending the browser to the console's /sso/complete with
 * a code (`error=`), where the console shows its error page with the status and words for it; the
 * refusal says what went wrong, never a secret nor what the provider wrote, nor whether an account
 * has the address (sso-login.ts's notLinked).
 */
export function mountSsoRoutes(app: Express, deps: SsoRouteDeps): void {
  // Redirects without a body (Express's redirect() writes one): the browser needs only Location.
  const redirect = (res: Response, status: 302 | 303, url: string) => {
    res.status(status).location(url).end();
  };
  const toConsole = (res: Response, query: Record<string, string>) => {
    redirect(res, 303, `${deps.consoleUrl}/sso/complete?${new URLSearchParams(query)}`);
  };
  const refused = (req: Request, res: Response, err: unknown) => {
    if (!(err instanceof SsoRefusal)) throw err;
    req.log.info({ refusal: err.code }, 'single sign-on refused');
    toConsole(res, { error: err.code });
  };

  /** The address a start is for: the one typed, or a link ticket's account's; and the link, if it is one. */
  const startFor = async (query: { email?: string | undefined; link?: string | undefined; binding: string }) => {
    if (query.link === undefined) {
      if (query.email === undefined) throw new SsoRefusal('bad_request', 'give your work e-mail address');
      return { address: normalizeEmail(query.email), link: undefined };
    }
    const ticket = openLinkTicket(deps.tokens.secret, query.link);
    if (!ticket || !keysEqualConstantTime(ticket.binding, query.binding))
      throw new SsoRefusal('flow_expired', 'this link was not started here, or is over five minutes old: start again');
    const account = await deps.store.findById(ticket.userId);
    // Logged out everywhere (or the password changed) since: the session that asked is over.
    if (!account || tokenVersionOf(account) !== ticket.tokenVersion)
      throw new SsoRefusal('flow_expired', 'this link was not started here, or is over five minutes old: start again');
    return { address: normalizeEmail(account.email), link: { userId: account.userId, tokenVersion: ticket.tokenVersion } };
  };

  app.get(SSO_START_PATH, noStore, async (req, res) => {
    try {
      if (!(await deps.admitStart(clientIpKey(req))))
        throw new SsoRefusal('rate_limited', 'too many sign-ons from this address; retry in a minute');
      const query = ssoStartQuery.safeParse(req.query);
      if (!query.success) throw new SsoRefusal('bad_request', 'the sign-on request was malformed');
      const { binding } = query.data;
      const { address, link } = await startFor(query.data);
      const domain = domainOf(address);
      if (domain === null) throw new SsoRefusal('bad_request', 'give your work e-mail address');
      // A domain only configured (not proven) finds nothing, whatever teamByDomain matches.
      const team = await teamByDomain(deps.db, domain);
      if (!team?.sso?.provenDomains?.includes(domain))
        throw new SsoRefusal('no_team', 'no team signs in with single sign-on for that e-mail domain');
      const found = await ssoWorkspace(deps.db, team.subscriptionId);
      const provider = await providerOf(found, deps.encryptionKey, deps.allowLocalProviders);
      const codeVerifier = oidc.randomPKCECodeVerifier();
      const flow: SsoFlow = {
        subscriptionId: found.workspace.subscriptionId,
        codeVerifier,
        state: oidc.randomState(),
        nonce: oidc.randomNonce(),
        binding,
        expiresAt: Date.now() + FLOW_TTL_MS,
        ...(link ? { link } : {}),
      };
      const url = oidc.buildAuthorizationUrl(provider, {
        redirect_uri: deps.callbackUrl,
        scope: 'openid email profile',
        code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
        state: flow.state,
        nonce: flow.nonce,
        login_hint: address,
      });
      res.append('Set-Cookie', flowCookieHeader(sealFlow(deps.tokens.secret, flow), FLOW_TTL_MS / 1000));
      redirect(res, 303, url.href);
    } catch (err) {
      // The same headers as a start that goes on to a provider: a flow cookie (here its deletion).
      if (err instanceof SsoRefusal) res.append('Set-Cookie', flowCookieHeader('', 0));
      refused(req, res, err);
    }
  });

  app.get(SSO_CALLBACK_PATH, noStore, async (req, res) => {
    // Whatever happens next, this flow is over: a second visit of this URL finds no cookie.
    res.append('Set-Cookie', flowCookieHeader('', 0));
    try {
      const query = ssoCallbackQuery.safeParse(req.query);
      if (!query.success) throw new SsoRefusal('bad_request', 'the provider’s answer was malformed');
      const flow = openFlow(deps.tokens.secret, cookieOf(req, FLOW_COOKIE));
      if (!flow) throw new SsoRefusal('flow_expired', 'this sign-on was not started here, or is over ten minutes old: start again');
      // Checked here in constant time, before anything reaches the provider; openid-client checks it again.
      if (!keysEqualConstantTime(query.data.state ?? '', flow.state))
        throw new SsoRefusal('state_mismatch', 'this answer is not for the sign-on this browser started');
      if (query.data.error !== undefined) throw new SsoRefusal('provider_refused', 'your team’s provider did not sign you in');
      const found = await ssoWorkspace(deps.db, flow.subscriptionId);
      const provider = await providerOf(found, deps.encryptionKey, deps.allowLocalProviders);
      const current = new URL(deps.callbackUrl);
      current.search = new URL(req.originalUrl, 'http://callback').search;
      let claims: oidc.IDToken | undefined;
      try {
        const tokens = await oidc.authorizationCodeGrant(provider, current, {
          pkceCodeVerifier: flow.codeVerifier,
          expectedState: flow.state,
          expectedNonce: flow.nonce,
          idTokenExpected: true,
        });
        claims = tokens.claims();
      } catch (err) {
        req.log.warn({ reason: (err as { code?: string }).code ?? (err as Error).name }, 'single sign-on: the code grant failed');
        throw new SsoRefusal('provider_refused', 'your team’s provider did not confirm this sign-in');
      }
      const identity = identityOf(claims);
      const email = verifiedEmail(claims, provenDomainsOf(found));
      if (flow.link) {
        // A link: nothing is recorded here; the code records it for the browser holding the binding.
        const pending = await linkableBy(deps, found, flow.link, { ...identity, email });
        toConsole(res, { code: await deps.codes.issue(flow.link.userId, flow.binding, Date.now(), pending), link: '1' });
        return;
      }
      const account = await signOnAccount(deps, found, { ...identity, email, name: displayNameOf(claims, email) }, req.id);
      // Recorded before the session exists, as a password log-in is: no session the audit log does not know.
      await deps.logins.record(account.userId, req.id, { subscriptionId: found.workspace.subscriptionId });
      toConsole(res, { code: await deps.codes.issue(account.userId, flow.binding) });
    } catch (err) {
      refused(req, res, err);
    }
  });

  app.post(SSO_EXCHANGE_PATH, noStore, async (req, res) => {
    const parsed = ssoExchangeInput.safeParse(req.body);
    if (!parsed.success) throw badRequest(parsed.error.issues[0]?.message ?? 'code is required');
    const userId = await deps.codes.redeem(parsed.data.code, parsed.data.binding);
    const account = userId === null ? null : await deps.store.findById(userId);
    if (!account)
      throw new HttpError(401, 'INVALID_CODE', 'the sign-on code is unknown, expired, already used, or not this browser’s: sign on again');
    res.json(await sessionFor(deps.db, deps.tokens, account));
  });

  mountSsoLinkRoutes(app, deps);
}

function cookieOf(req: Request, name: string): string | undefined {
  for (const pair of (req.get('cookie') ?? '').split(';')) {
    const at = pair.indexOf('=');
    if (at > 0 && pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim();
  }
  return undefined;
}
