import type { Express, Request, Response } from 'express';
import { clientIp } from '../platform/http/client-ip.ts';
import { errorPage, goingOnPage } from './pages/auth.page.ts';
import { assistantsPage, consentPage } from './pages/assistants.page.ts';
import { SESSION_COOKIE, clearedCookie, csrfToken, readCookies } from './session.ts';
import type { TeamPagesKit } from './team-pages.routes.ts';

/** What the assistant pages need beyond the team pages' kit: the connected key, and where the authorization server is. */
export interface AssistantPagesKit extends TeamPagesKit {
  /** The API key this console holds for the account (the svc_key cookie), or null. */
  keyOf(req: Request, accountId: string): string | null;
  /** The accounts face's public URL: the only place a consent's answer may send the browser. */
  accountsPublicUrl: string;
}

const UID = /^[\w-]{1,64}$/;
const API_KEY = /^svc_[A-Za-z0-9]{33}$/;

const field = (req: Request, name: string): string => {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value.trim() : '';
};

/**
 * The console's side of an assistant connecting by OAuth (the accounts face's authorization server
 * sends the browser here): /oauth/connect/{uid}, the consent page (log in first, with the
 * console's own log-in, which comes back here), and /assistants, the connected assistants with
 * "disconnect". Every call takes the account token, as the accounts routes want.
 */
export function mountAssistantPages(app: Express, kit: AssistantPagesKit): void {
  const { api, html } = kit;

  const customer = async (req: Request, res: Response) => {
    const token = readCookies(req.get('cookie')).get(SESSION_COOKIE);
    if (!token) return null;
    const who = { clientIp: clientIp(req), token };
    const me = await api.me(who);
    if (!me.body) {
      if (me.status !== 401) kit.fail(me.status, me.error);
      res.append('Set-Cookie', clearedCookie(SESSION_COOKIE));
      return null;
    }
    const csrf = csrfToken(kit.secret, token);
    return { me: me.body, who, frame: { name: me.body.name, csrf } };
  };

  const connectedKey = async (req: Request, c: NonNullable<Awaited<ReturnType<typeof customer>>>) => {
    const apiKey = kit.keyOf(req, c.me.id);
    if (!apiKey) return null;
    const usage = await api.usage({ ...c.who, apiKey });
    if (usage.status >= 500) kit.fail(usage.status, usage.error);
    return usage.body ? { apiKey, last4: usage.body.key?.last4 ?? apiKey.slice(-4), tier: usage.body.tier } : null;
  };

  /** The request's page, or a page that says it has ended. */
  const request = async (res: Response, c: NonNullable<Awaited<ReturnType<typeof customer>>>, uid: string) => {
    const answer = UID.test(uid) ? await api.oauthRequest(c.who, uid) : undefined;
    if (answer && answer.status >= 500) kit.fail(answer.status, answer.error);
    if (!answer?.body) {
      html(
        res,
        errorPage({
          status: 404,
          message: 'This connection request has ended or does not exist. Start again from your assistant.',
          signedIn: c.frame,
        }),
        answer?.status === 404 || !answer ? 404 : answer.status,
      );
      return null;
    }
    return answer.body;
  };

  app.get(
    '/oauth/connect/:uid',
    kit.pageRoute(async (req, res) => {
      const uid = String(req.params.uid ?? '');
      const c = await customer(req, res);
      if (!c) {
        res.redirect(303, `/login?${new URLSearchParams({ next: `/oauth/connect/${uid}` })}`);
        return;
      }
      const found = await request(res, c, uid);
      if (!found) return;
      const key = await connectedKey(req, c);
      html(res, consentPage({ signedIn: c.frame, request: found, connected: key && { last4: key.last4, tier: key.tier } }));
    }),
  );

  kit.post('/oauth/connect/:uid', async (req, res) => {
    const uid = String(req.params.uid ?? '');
    const c = await customer(req, res);
    if (!c) {
      res.redirect(303, `/login?${new URLSearchParams({ next: `/oauth/connect/${uid}` })}`);
      return;
    }
    const found = await request(res, c, uid);
    if (!found) return;
    let answer;
    if (field(req, 'decision') === 'deny') answer = await api.oauthDeny(c.who, uid);
    else {
      const typed = field(req, 'apiKey');
      const key = typed ? null : await connectedKey(req, c);
      const apiKey = typed || key?.apiKey || '';
      const refuse = (text: string) =>
        html(
          res,
          consentPage({
            signedIn: c.frame,
            request: found,
            connected: key && { last4: key.last4, tier: key.tier },
            notice: { kind: 'error', text },
          }),
          400,
        );
      if (!API_KEY.test(apiKey))
        return refuse(
          typed ? 'That is not an svc API key (svc_ and 33 letters or digits).' : 'Paste the API key whose subscription it should use.',
        );
      answer = await api.oauthConsent(c.who, uid, apiKey);
      if (answer.status >= 500) kit.fail(answer.status, answer.error);
      if (answer.status === 400 && answer.code === 'TIER_WITHOUT_MCP')
        return refuse("That key's subscription does not include the MCP server. Paste a pro or team key.");
      if (answer.status === 400) return refuse('That key does not work (replaced, revoked, expired, or mistyped).');
    }
    if (answer.status >= 500) kit.fail(answer.status, answer.error);
    const to = answer.body?.redirectTo;
    // Only ever on to the authorization server: the answer's address is checked, not followed blindly.
    if (!to?.startsWith(`${kit.accountsPublicUrl}/`)) kit.fail(502, 'the authorization server answered an unexpected address');
    html(res, goingOnPage({ title: 'Back to your assistant', text: 'Your assistant takes over next.', to, linkText: 'Go on' }));
  });

  app.get(
    '/assistants',
    kit.pageRoute(async (req, res) => {
      const c = await customer(req, res);
      if (!c) {
        res.redirect(303, '/login?next=/assistants');
        return;
      }
      const listed = await api.assistants(c.who);
      if (listed.status >= 500 || !listed.body) kit.fail(listed.status >= 500 ? listed.status : 502, listed.error);
      const notice = req.query.disconnected === '1' ? { kind: 'ok' as const, text: 'Disconnected: its access has ended.' } : undefined;
      html(res, assistantsPage({ signedIn: c.frame, connections: listed.body.connections, ...(notice ? { notice } : {}) }));
    }),
  );

  kit.post('/assistants/:grantId/disconnect', async (req, res) => {
    const c = await customer(req, res);
    if (!c) {
      res.redirect(303, '/login');
      return;
    }
    const grantId = String(req.params.grantId ?? '');
    const answer = UID.test(grantId) ? await api.disconnectAssistant(c.who, grantId) : undefined;
    if (answer && answer.status >= 500) kit.fail(answer.status, answer.error);
    // Gone already (another tab, or not this account's): the list says what stands.
    res.redirect(303, answer?.status === 204 ? '/assistants?disconnected=1' : '/assistants');
  });
}
