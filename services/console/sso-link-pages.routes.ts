import type { Express, Request, Response } from 'express';
import { clientIp } from '../platform/http/client-ip.ts';
import { goingOnPage } from './pages/auth.page.ts';
import type { Frame } from './pages/layout.ts';
import { ssoLinkPage } from './pages/sso-link.page.ts';
import { SESSION_COOKIE, clearedCookie, csrfToken, readCookies } from './session.ts';
import { bindingCookie, bindingHashOf, newBindingSecret } from './sso-binding.ts';
import type { TeamPagesKit } from './team-pages.routes.ts';

const field = (req: Request, name: string): string => {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
};

const NOTICES: Record<string, NonNullable<Frame['notice']>> = {
  linked: { kind: 'ok', text: "Your team's sign-on is linked: it opens this account from now on." },
  unlinked: { kind: 'ok', text: "The link is removed: that team's provider no longer opens this account." },
};

/** The fixed notice of `?done=`, or none: only NOTICES' own names (`__proto__` and `toString` are not notices). */
export const linkNotice = (done: unknown): Frame['notice'] | undefined =>
  typeof done === 'string' && Object.hasOwn(NOTICES, done) ? NOTICES[done] : undefined;

/**
 * /account/sso: linking the signed-in account to its team's provider (sso-link.routes.ts of the accounts
 * service). Linking starts here, from a CSRF-checked form of the signed-in session: the console asks
 * the accounts service for a link ticket with the session's token and this browser's binding hash,
 * and sends the browser on to the provider; the flow ends at /sso/complete (console.routes.ts), which
 * records the link with the binding secret this browser holds.
 */
export function mountSsoLinkPages(app: Express, kit: TeamPagesKit): void {
  const { api, html } = kit;

  const customer = async (req: Request, res: Response) => {
    const token = readCookies(req.get('cookie')).get(SESSION_COOKIE);
    if (!token) {
      res.redirect(303, '/login');
      return null;
    }
    const who = { clientIp: clientIp(req), token };
    const me = await api.me(who);
    if (!me.body) {
      if (me.status !== 401) kit.fail(me.status, me.error);
      res.append('Set-Cookie', clearedCookie(SESSION_COOKIE));
      res.redirect(303, '/login');
      return null;
    }
    const csrf = csrfToken(kit.secret, token);
    return { me: me.body, who, frame: { name: me.body.name, csrf } };
  };

  const render = async (res: Response, c: NonNullable<Awaited<ReturnType<typeof customer>>>, notice?: Frame['notice'], status = 200) => {
    const links = await api.ssoLinks(c.who);
    if (links.status >= 500) kit.fail(links.status, links.error);
    html(res, ssoLinkPage({ signedIn: c.frame, email: c.me.email, links: links.body?.links ?? [], ...(notice ? { notice } : {}) }), status);
  };

  app.get(
    '/account/sso',
    kit.pageRoute(async (req, res) => {
      const c = await customer(req, res);
      if (!c) return;
      const done = linkNotice(req.query.done);
      await render(res, c, done);
    }),
  );

  kit.post('/account/sso/link', async (req, res) => {
    const c = await customer(req, res);
    if (!c) return;
    // This browser's secret for the link; the accounts service gets only its hash (sso-binding.ts).
    const binding = newBindingSecret();
    const started = await api.ssoLinkStart(c.who, bindingHashOf(binding));
    if (!started.body) {
      if (started.status >= 500) kit.fail(started.status, started.error);
      await render(res, c, { kind: 'error', text: started.error ?? 'the link could not be started' }, started.status);
      return;
    }
    res.append('Set-Cookie', bindingCookie(binding, 600));
    html(
      res,
      goingOnPage({
        title: "On to your team's sign-in",
        text: "Your team's sign-in provider opens next. Sign in there as your account's address to link it.",
        to: started.body.location,
        linkText: "Continue to your team's sign-in",
      }),
    );
  });

  kit.post('/account/sso/unlink', async (req, res) => {
    const c = await customer(req, res);
    if (!c) return;
    const answer = await api.ssoUnlink(c.who, field(req, 'id'));
    if (answer.status >= 500) kit.fail(answer.status, answer.error);
    if (answer.status !== 204) {
      await render(res, c, { kind: 'error', text: answer.error ?? 'the link was not removed' }, answer.status);
      return;
    }
    res.redirect(303, '/account/sso?done=unlinked');
  });
}
