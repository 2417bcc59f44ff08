import type { Express, Request, Response } from 'express';
import { VERIFICATION_TOKEN } from '../accounts/email-verification.ts';
import { clientIp } from '../platform/http/client-ip.ts';
import { goingOnPage } from './pages/auth.page.ts';
import { accountPage } from './pages/account.page.ts';
import { verifyRefusedPage, verifySignedInPage, verifySignedOutPage } from './pages/verify.page.ts';
import { SESSION_COOKIE, clearedCookie, csrfToken, readCookies } from './session.ts';
import type { TeamPagesKit } from './team-pages.routes.ts';

const field = (req: Request, name: string): string => {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
};

/** What a refused link means to the customer (the accounts service's codes, in the console's words). */
export function verifyRefusal(status: number, code: string | undefined): string {
  if (status === 410 || code === 'EXPIRED') return 'This link has expired. Send yourself a new one from your account page.';
  if (status === 401) return 'Your session has ended. Log in, then open the link again.';
  return 'This link does not confirm the address of the account you are logged in to: it was used, replaced by a newer one, or is for another account. Send yourself a new one from your account page.';
}

/**
 * The address verification pages: /verify, the page of the link in the welcome (or a resend)
 * e-mail, and the account page's resend form. Each call takes the account token, as the accounts
 * service's routes want: the link proves the mailbox, the session the account.
 */
export function mountVerifyPages(app: Express, kit: TeamPagesKit): void {
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
    return { me: me.body, csrf, who, frame: { name: me.body.name, csrf } };
  };

  // The token is a secret: never logged (the console logs no URL), in no other URL than this page's
  // own, and no page sends a Referer (Referrer-Policy: no-referrer on every answer).
  app.get(
    '/verify',
    kit.pageRoute(async (req, res) => {
      const token = typeof req.query.token === 'string' ? req.query.token : '';
      if (!VERIFICATION_TOKEN.test(token)) {
        html(res, verifyRefusedPage({ text: verifyRefusal(400, undefined) }), 400);
        return;
      }
      const hasSession = readCookies(req.get('cookie')).has(SESSION_COOKIE);
      // From a webmail the SameSite=Strict session does not come along: one hop through this page brings it.
      if (!hasSession && req.get('sec-fetch-site') === 'cross-site') {
        const self = `/verify?${new URLSearchParams({ token })}`;
        html(res, goingOnPage({ title: 'Opening your link', text: 'Your link opens next.', to: self, linkText: 'Open your link' }));
        return;
      }
      const c = await customer(req, res);
      if (!c) {
        html(res, verifySignedOutPage({ token, csrf: csrfToken(kit.secret, kit.preSession(req, res)) }));
        return;
      }
      if (c.me.emailVerified) {
        html(res, accountPage({ me: c.me, csrf: c.csrf, notice: { kind: 'ok', text: 'Your address is verified.' } }));
        return;
      }
      html(res, verifySignedInPage({ signedIn: c.frame, email: c.me.email, token }));
    }),
  );
  kit.post('/verify', async (req, res) => {
    const c = await customer(req, res);
    if (!c) {
      res.redirect(303, '/login');
      return;
    }
    const token = field(req, 'token');
    const answer = VERIFICATION_TOKEN.test(token) ? await api.verifyEmail(c.who, token) : undefined;
    if (answer && answer.status >= 500) kit.fail(answer.status, answer.error);
    if (!answer?.body) {
      const status = answer?.status ?? 400;
      html(res, verifyRefusedPage({ signedIn: c.frame, text: verifyRefusal(status, answer?.code) }), status);
      return;
    }
    res.redirect(303, '/account?verified=1');
  });
  kit.post('/account/verify/resend', async (req, res) => {
    const c = await customer(req, res);
    if (!c) {
      res.redirect(303, '/login');
      return;
    }
    const answer = await api.resendVerification(c.who);
    if (answer.status >= 500) kit.fail(answer.status, answer.error);
    if (!answer.body) {
      const text =
        answer.status === 429
          ? `Too many links asked for; try again in ${answer.retryAfter ?? 'a while'} seconds.`
          : (answer.error ?? 'the link was not sent');
      html(res, accountPage({ me: c.me, csrf: c.csrf, notice: { kind: 'error', text } }), answer.status);
      return;
    }
    res.redirect(303, answer.body.emailVerified ? '/account?verified=1' : '/account?sent=1');
  });
}
