import { readFileSync } from 'node:fs';
import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { MeAnswer } from '../accounts/accounts.api.ts';
import { CONTENT_SECURITY_POLICY as REPORT_POLICY } from '../integration/report/render-html.ts';
import type { Logger } from '../platform/logger.ts';
import { clientIp } from '../platform/http/client-ip.ts';
import { openKey, sealKey } from './key-cookie.ts';
import { accountPage } from './pages/account.page.ts';
import { errorPage, goingOnPage, loginPage, signupPage } from './pages/auth.page.ts';
import { ssoRefusal } from './sso-refusals.ts';
import { BINDING_COOKIE, NEXT_COOKIE, bindingCookie, bindingHashOf, isBindingSecret, newBindingSecret, nextCookie } from './sso-binding.ts';
import { mountSsoLinkPages } from './sso-link-pages.routes.ts';
import { ACTION_FAMILIES, auditPage } from './pages/audit.page.ts';
import { collectionsPage, jobPage } from './pages/collections.page.ts';
import { keysPage } from './pages/keys.page.ts';
import type { Frame } from './pages/layout.ts';
import { pricingPage } from './pages/pricing.page.ts';
import { reportsPage } from './pages/reports.page.ts';
import { runPage, runsPage } from './pages/runs.page.ts';
import { usagePage } from './pages/usage.page.ts';
import { safeNext } from './safe-next.ts';
import {
  KEY_COOKIE,
  PRE_SESSION_COOKIE,
  SESSION_COOKIE,
  clearedCookie,
  cookieHeader,
  csrfToken,
  csrfValid,
  newPreSession,
  readCookies,
} from './session.ts';
import { mountTeamPages } from './team-pages.routes.ts';
import { mountVerifyPages } from './verify-pages.routes.ts';
import { mountAssistantPages } from './assistant-pages.routes.ts';
import { isRunId, type Credentials, type Upstream } from './upstream.ts';

/** What every console page answers with: nothing from elsewhere, no inline code, no framing. */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export interface ConsoleDeps {
  secret: string;
  api: Upstream;
  /** KEY_ROTATION_GRACE_SECONDS, for the rotate form's wording. */
  graceSeconds: number;
  /** Where browsers reach the accounts service (ACCOUNTS_PUBLIC_URL): a single sign-on starts there. */
  accountsPublicUrl: string;
  log: Logger;
  now?: () => Date;
}

const STYLESHEET = readFileSync(new URL('./assets/console.css', import.meta.url));

interface SignedIn {
  me: MeAnswer;
  token: string;
  csrf: string;
  who: Credentials;
  /** The connected API key, opened from its cookie; null: none. */
  apiKey: string | null;
}

/** Headers on every answer of the console, its health and 404s included. */
/** A cookie's percent-encoded way on, or undefined when it does not decode. */
function decodeNext(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

export const securityHeaders: RequestHandler = (_req, res, next) => {
  res.set({
    'Content-Security-Policy': CONSOLE_CSP,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
    'Cross-Origin-Opener-Policy': 'same-origin',
  });
  next();
};

/** The console's form bodies: URL-encoded, small. */
export const formBodies = express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20 });

const field = (req: Request, name: string): string => {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
};

/**
 * The console's pages. GETs only read; every change is a POST carrying the CSRF token of the
 * session (or, before sign-in, of the pre-session cookie the form came with), checked before
 * anything else; then the console calls the customer's own routes and redirects (303) to a page.
 */
export function mountConsoleRoutes(app: Express, deps: ConsoleDeps): void {
  const { secret, api } = deps;
  const now = deps.now ?? (() => new Date());

  const html = (res: Response, body: string, status = 200) => {
    res.status(status).set({ 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' }).send(body);
  };
  const who = (req: Request, extra: Omit<Credentials, 'clientIp'> = {}): Credentials => ({ clientIp: clientIp(req), ...extra });

  /** The pre-session of a signed-out form: the request's, or a new one set on the answer. */
  const preSession = (req: Request, res: Response): string => {
    const existing = readCookies(req.get('cookie')).get(PRE_SESSION_COOKIE);
    if (existing && /^[\w-]{32}$/.test(existing)) return existing;
    const fresh = newPreSession();
    res.append('Set-Cookie', cookieHeader(PRE_SESSION_COOKIE, fresh));
    return fresh;
  };

  /** The signed-in customer, or null after redirecting to the log-in page (the cookie cleared when it no longer works). */
  const signedIn = async (req: Request, res: Response): Promise<SignedIn | null> => {
    const cookies = readCookies(req.get('cookie'));
    const token = cookies.get(SESSION_COOKIE);
    if (!token) {
      res.redirect(303, '/login');
      return null;
    }
    const me = await api.me(who(req, { token }));
    if (me.status === 401 || !me.body) {
      if (me.status !== 401) throw new UpstreamFailure(me.status, me.error);
      res.append('Set-Cookie', clearedCookie(SESSION_COOKIE));
      res.redirect(303, '/login');
      return null;
    }
    return {
      me: me.body,
      token,
      csrf: csrfToken(secret, token),
      who: who(req, { token }),
      apiKey: openKey(secret, me.body.id, cookies.get(KEY_COOKIE)),
    };
  };

  /** Signed in with a key connected, or null once the customer is sent to log in or to connect a key. */
  const signedInWithKey = async (req: Request, res: Response): Promise<(SignedIn & { apiKey: string }) | null> => {
    const s = await signedIn(req, res);
    if (!s) return null;
    if (!s.apiKey) {
      res.redirect(303, '/keys');
      return null;
    }
    return { ...s, apiKey: s.apiKey };
  };
  const frameOf = (s: SignedIn): NonNullable<Frame['signedIn']> => ({ name: s.me.name, csrf: s.csrf });

  /** A page handler whose failures become an HTML page with the request id, never a stack or a secret. */
  const pageRoute =
    (handler: (req: Request, res: Response) => Promise<void>): RequestHandler =>
    async (req: Request, res: Response, _next: NextFunction) => {
      try {
        await handler(req, res);
      } catch (err) {
        const status = err instanceof UpstreamFailure && err.status === 503 ? 503 : 500;
        req.log.error(
          { err: err instanceof Error ? err.name : 'unknown', status: err instanceof UpstreamFailure ? err.status : undefined },
          'console page failed',
        );
        if (!res.headersSent)
          html(
            res,
            errorPage({ status, message: 'The console could not complete this request. Try again in a moment.', requestId: req.id }),
            status,
          );
      }
    };

  /** A POST: its CSRF token must be the session's (or the pre-session's for the signed-out forms). */
  const post = (path: string, handler: (req: Request, res: Response) => Promise<void>, signedOut = false) => {
    app.post(
      path,
      formBodies,
      pageRoute(async (req, res) => {
        const cookies = readCookies(req.get('cookie'));
        const session = signedOut ? cookies.get(PRE_SESSION_COOKIE) : cookies.get(SESSION_COOKIE);
        if (!csrfValid(secret, session, field(req, 'csrf'))) {
          html(
            res,
            errorPage({ status: 403, message: 'This form has expired or did not come from the console. Reload the page and try again.' }),
            403,
          );
          return;
        }
        await handler(req, res);
      }),
    );
  };

  const setSession = (res: Response, token: string) => {
    res.append('Set-Cookie', cookieHeader(SESSION_COOKIE, token));
    res.append('Set-Cookie', clearedCookie(PRE_SESSION_COOKIE));
  };

  app.get('/console.css', (_req, res) => {
    res.set({ 'Content-Type': 'text/css; charset=utf-8', 'Cache-Control': 'public, max-age=3600' }).send(STYLESHEET);
  });

  app.get(
    '/',
    pageRoute(async (req, res) => {
      res.redirect(303, readCookies(req.get('cookie')).has(SESSION_COOKIE) ? '/account' : '/login');
    }),
  );

  // --- signing up, in and out ---

  app.get(
    '/signup',
    pageRoute(async (req, res) => {
      const next = safeNext(req.query.next);
      html(res, signupPage({ csrf: csrfToken(secret, preSession(req, res)), ...(next ? { next } : {}) }));
    }),
  );
  post(
    '/signup',
    async (req, res) => {
      const input = { name: field(req, 'name'), email: field(req, 'email'), password: field(req, 'password') };
      // Where the form came from wants the customer back (an invitation's page): a console path only.
      const next = safeNext(field(req, 'next'));
      const answer = await api.signup(who(req), input);
      if (!answer.body) {
        if (answer.status >= 500) throw new UpstreamFailure(answer.status, answer.error);
        const csrf = csrfToken(secret, preSession(req, res));
        const notice = { kind: 'error' as const, text: answer.error ?? 'sign-up failed' };
        html(res, signupPage({ csrf, email: input.email, name: input.name, notice, ...(next ? { next } : {}) }), answer.status);
        return;
      }
      setSession(res, answer.body.token);
      res.redirect(303, next ?? '/pricing?welcome=1');
    },
    true,
  );

  app.get(
    '/login',
    pageRoute(async (req, res) => {
      const notice: Frame['notice'] | undefined =
        req.query.out === '1'
          ? { kind: 'ok', text: 'You are logged out.' }
          : req.query.out === 'all'
            ? { kind: 'ok', text: 'You are logged out everywhere: every session of this account has ended.' }
            : undefined;
      const next = safeNext(req.query.next);
      html(res, loginPage({ csrf: csrfToken(secret, preSession(req, res)), ...(notice ? { notice } : {}), ...(next ? { next } : {}) }));
    }),
  );
  post(
    '/login',
    async (req, res) => {
      const input = { email: field(req, 'email'), password: field(req, 'password') };
      const next = safeNext(field(req, 'next'));
      const answer = await api.login(who(req), input);
      if (!answer.body) {
        if (answer.status >= 500) throw new UpstreamFailure(answer.status, answer.error);
        const csrf = csrfToken(secret, preSession(req, res));
        const notice = { kind: 'error' as const, text: answer.error ?? 'log-in failed' };
        html(res, loginPage({ csrf, email: input.email, notice, ...(next ? { next } : {}) }), answer.status);
        return;
      }
      setSession(res, answer.body.token);
      res.redirect(303, next ?? '/account');
    },
    true,
  );

  // Single sign-on: the form sends the browser on to the accounts service, which finds the team by the
  // address's domain and sends it to the team's provider; the provider's answer comes back to
  // /sso/complete with a one-time code that the console, from its server, turns into the session.
  post(
    '/login/sso',
    async (req, res) => {
      const email = field(req, 'ssoEmail').trim().toLowerCase();
      const next = safeNext(field(req, 'next'));
      if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email) || email.length > 254) {
        const csrf = csrfToken(secret, preSession(req, res));
        html(
          res,
          loginPage({
            csrf,
            ssoEmail: email,
            notice: { kind: 'error', text: 'Enter your work e-mail address.' },
            ...(next ? { next } : {}),
          }),
          400,
        );
        return;
      }
      // This browser's secret for the sign-on; the accounts service gets only its hash (sso-binding.ts).
      const binding = newBindingSecret();
      res.append('Set-Cookie', bindingCookie(binding, 600));
      // Where to go once signed in, kept in this browser (never sent to the provider): empty clears an older one.
      res.append('Set-Cookie', nextCookie(next ?? '', next ? 600 : 0));
      const to = `${deps.accountsPublicUrl}/auth/sso/start?${new URLSearchParams({ email, return: 'console', binding: bindingHashOf(binding) })}`;
      html(
        res,
        goingOnPage({
          title: "On to your team's sign-in",
          text: "Your team's sign-in provider opens next.",
          to,
          linkText: "Continue to your team's sign-in",
        }),
      );
    },
    true,
  );
  app.get(
    '/sso/complete',
    pageRoute(async (req, res) => {
      const error = typeof req.query.error === 'string' ? req.query.error : null;
      const code = typeof req.query.code === 'string' ? req.query.code : null;
      if (error !== null || code === null) {
        const refusal = ssoRefusal(error ?? 'bad_request');
        html(res, errorPage({ status: refusal.status, message: refusal.text }), refusal.status);
        return;
      }
      // The binding and the way on are spent with this visit, whatever comes of it.
      res.append('Set-Cookie', bindingCookie('', 0));
      res.append('Set-Cookie', nextCookie('', 0));
      const cookies = readCookies(req.get('cookie'));
      const binding = cookies.get(BINDING_COOKIE);
      const next = safeNext(decodeNext(cookies.get(NEXT_COOKIE)));
      if (!isBindingSecret(binding)) {
        const refusal = ssoRefusal('flow_expired');
        html(res, errorPage({ status: refusal.status, message: refusal.text }), refusal.status);
        return;
      }
      if (req.query.link === '1') {
        // A link's end (sso-link-pages.routes.ts): the code records the identity on the account that
        // started it, for this browser's binding secret only; it opens no session.
        const linked = await api.ssoLinkFinish(who(req), code, binding);
        if (!linked.body) {
          if (linked.status >= 500) throw new UpstreamFailure(linked.status, linked.error);
          html(
            res,
            errorPage({ status: linked.status, message: `Your team's sign-on was not linked: ${linked.error ?? 'refused'}.` }),
            linked.status,
          );
          return;
        }
        html(
          res,
          goingOnPage({
            title: "Your team's sign-on is linked",
            text: "Your team's sign-in provider opens your account from now on.",
            to: '/account/sso?done=linked',
            linkText: 'Back to your account',
          }),
        );
        return;
      }
      const answer = await api.ssoExchange(who(req), code, binding);
      if (!answer.body) {
        if (answer.status >= 500) throw new UpstreamFailure(answer.status, answer.error);
        html(
          res,
          errorPage({
            status: 401,
            message: 'This sign-on has expired, was already used, or was not started in this browser. Log in again.',
          }),
          401,
        );
        return;
      }
      setSession(res, answer.body.token);
      // A page, not a redirect: this answer ends a chain that began at the provider (another site), and a
      // browser sends the SameSite=Strict session with the next request only once a console page asks it.
      html(
        res,
        goingOnPage({
          title: 'You are signed in',
          text: `Welcome, ${answer.body.user.name}.`,
          to: next ?? '/account',
          linkText: next ? 'Go on' : 'Go to your account',
        }),
      );
    }),
  );

  // The token is revoked before the cookies go: a copy of it (another tab's, a stolen one) is refused
  // too. When the accounts service cannot revoke it, the page says so and the session stays, so the
  // customer can try again rather than leave believing a live token is dead.
  const logOut = async (req: Request, res: Response, revoke: (who: Credentials) => ReturnType<Upstream['logout']>) => {
    const token = readCookies(req.get('cookie')).get(SESSION_COOKIE);
    const answer = await revoke(who(req, { token })).catch(() => null);
    // 401: the token was refused already (expired, revoked, logged out in another tab): nothing left to revoke.
    if (!answer || (!answer.body && answer.status !== 401)) {
      req.log.warn({ status: answer?.status ?? null }, 'console log-out: the token could not be revoked');
      const message = 'You are still logged in: the log-out could not be completed. Try again in a moment.';
      html(res, errorPage({ status: 503, message, requestId: req.id }), 503);
      return;
    }
    res.append('Set-Cookie', clearedCookie(SESSION_COOKIE));
    res.append('Set-Cookie', clearedCookie(KEY_COOKIE));
    res.redirect(303, answer.body?.revoked === 'all' ? '/login?out=all' : '/login?out=1');
  };
  post('/logout', (req, res) => logOut(req, res, api.logout));
  post('/account/logout-all', (req, res) => logOut(req, res, api.logoutAll));

  // --- pricing and checkout ---

  app.get(
    '/pricing',
    pageRoute(async (req, res) => {
      const cookies = readCookies(req.get('cookie'));
      if (!cookies.has(SESSION_COOKIE)) {
        html(res, pricingPage({ signedIn: null }));
        return;
      }
      const s = await signedIn(req, res);
      if (!s) return;
      const notice: Frame['notice'] | undefined =
        req.query.welcome === '1'
          ? { kind: 'ok', text: `Welcome, ${s.me.name}: your account is on the free tier. Choose a paid tier to get an API key.` }
          : undefined;
      html(res, pricingPage({ signedIn: { ...frameOf(s), tier: s.me.tier }, ...(notice ? { notice } : {}) }));
    }),
  );
  post('/pricing/checkout', async (req, res) => {
    const s = await signedIn(req, res);
    if (!s) return;
    const tier = field(req, 'tier');
    const view = { signedIn: { ...frameOf(s), tier: s.me.tier } };
    if (tier !== 'pro' && tier !== 'team') {
      html(res, pricingPage({ ...view, notice: { kind: 'error', text: 'Choose the pro or the team tier.' } }), 400);
      return;
    }
    const answer = await api.checkout(s.who, tier);
    if (!answer.body) {
      html(
        res,
        pricingPage({ ...view, notice: { kind: 'error', text: `Checkout is not available: ${answer.error ?? 'unknown error'}` } }),
        answer.status,
      );
      return;
    }
    // A link, not a redirect: the CSP's form-action 'self' rightly stops a form from landing on another site.
    html(res, pricingPage({ ...view, checkoutUrl: { tier, url: answer.body.url } }));
  });

  // --- account ---

  app.get(
    '/account',
    pageRoute(async (req, res) => {
      const s = await signedIn(req, res);
      if (!s) return;
      const notice: Frame['notice'] | undefined =
        req.query.changed === '1'
          ? { kind: 'ok', text: 'Your password is changed.' }
          : req.query.sent === '1'
            ? { kind: 'ok', text: `A new link is on its way to ${s.me.email}; earlier links no longer work.` }
            : req.query.verified === '1' && s.me.emailVerified
              ? { kind: 'ok', text: 'Your address is verified.' }
              : undefined;
      html(res, accountPage({ me: s.me, csrf: s.csrf, ...(notice ? { notice } : {}) }));
    }),
  );
  post('/account/password', async (req, res) => {
    const s = await signedIn(req, res);
    if (!s) return;
    const answer = await api.changePassword(s.who, {
      currentPassword: field(req, 'currentPassword'),
      newPassword: field(req, 'newPassword'),
    });
    if (!answer.body) {
      if (answer.status >= 500) throw new UpstreamFailure(answer.status, answer.error);
      html(
        res,
        accountPage({ me: s.me, csrf: s.csrf, notice: { kind: 'error', text: answer.error ?? 'the password was not changed' } }),
        answer.status,
      );
      return;
    }
    // The change revoked every earlier token, this one too: the answer's token is the session now.
    res.append('Set-Cookie', cookieHeader(SESSION_COOKIE, answer.body.token));
    const key = s.apiKey;
    if (key) res.append('Set-Cookie', cookieHeader(KEY_COOKIE, sealKey(secret, s.me.id, key)));
    res.redirect(303, '/account?changed=1');
  });

  // --- keys ---

  const keysView = async (s: SignedIn) => {
    if (!s.apiKey) return { connected: null };
    const usage = await api.usage({ ...s.who, apiKey: s.apiKey });
    if (usage.status >= 500) throw new UpstreamFailure(usage.status, usage.error);
    return { connected: { last4: s.apiKey.slice(-4), usage: usage.body ?? null } };
  };

  app.get(
    '/keys',
    pageRoute(async (req, res) => {
      const s = await signedIn(req, res);
      if (!s) return;
      const notice: Frame['notice'] | undefined =
        req.query.connected === '1'
          ? { kind: 'ok', text: 'Your key is connected.' }
          : req.query.disconnected === '1'
            ? { kind: 'ok', text: 'The console no longer holds your key.' }
            : undefined;
      html(
        res,
        keysPage({
          signedIn: frameOf(s),
          accountTier: s.me.tier,
          graceSeconds: deps.graceSeconds,
          ...(await keysView(s)),
          ...(notice ? { notice } : {}),
        }),
      );
    }),
  );
  post('/keys/connect', async (req, res) => {
    const s = await signedIn(req, res);
    if (!s) return;
    const apiKey = field(req, 'apiKey').trim();
    const usage = /^svc_[A-Za-z0-9]{33}$/.test(apiKey) ? await api.usage({ ...s.who, apiKey }) : undefined;
    if (usage && usage.status >= 500) throw new UpstreamFailure(usage.status, usage.error);
    if (!usage?.body) {
      const text = usage
        ? 'That key does not work (replaced, revoked, expired, or mistyped).'
        : 'That is not an svc API key (svc_ and 33 letters or digits).';
      html(
        res,
        keysPage({
          signedIn: frameOf(s),
          accountTier: s.me.tier,
          graceSeconds: deps.graceSeconds,
          ...(await keysView(s)),
          notice: { kind: 'error', text },
        }),
        400,
      );
      return;
    }
    res.append('Set-Cookie', cookieHeader(KEY_COOKIE, sealKey(secret, s.me.id, apiKey)));
    res.redirect(303, '/keys?connected=1');
  });
  post('/keys/disconnect', async (_req, res) => {
    res.append('Set-Cookie', clearedCookie(KEY_COOKIE));
    res.redirect(303, '/keys?disconnected=1');
  });
  post('/keys/rotate', async (req, res) => {
    const s = await signedIn(req, res);
    if (!s) return;
    const base = { signedIn: frameOf(s), accountTier: s.me.tier, graceSeconds: deps.graceSeconds };
    if (!s.apiKey) {
      html(res, keysPage({ ...base, connected: null, notice: { kind: 'error', text: 'Connect your key first.' } }), 400);
      return;
    }
    const grace = field(req, 'grace') === 'none' ? 0 : deps.graceSeconds;
    const answer = await api.rotate({ ...s.who, apiKey: s.apiKey }, grace);
    if (!answer.body) {
      if (answer.status >= 500) throw new UpstreamFailure(answer.status, answer.error);
      const text =
        answer.status === 429
          ? `Too many rotations this hour; try again in ${answer.retryAfter ?? 'a while'} seconds.`
          : (answer.error ?? 'the key was not rotated');
      html(res, keysPage({ ...base, ...(await keysView(s)), notice: { kind: 'error', text } }), answer.status);
      return;
    }
    html(res, keysPage({ ...base, ...(await keysView(s)), rotated: answer.body }));
  });

  // --- usage ---

  app.get(
    '/usage',
    pageRoute(async (req, res) => {
      const s = await signedIn(req, res);
      if (!s) return;
      const { connected } = await keysView(s);
      html(res, usagePage({ signedIn: frameOf(s), usage: connected?.usage ?? null, now: now() }));
    }),
  );

  // --- audit log (team keys) ---

  app.get(
    '/audit',
    pageRoute(async (req, res) => {
      const s = await signedIn(req, res);
      if (!s) return;
      const action = ACTION_FAMILIES.some(([value]) => value === req.query.action) ? String(req.query.action) : '';
      if (!s.apiKey) {
        html(res, auditPage({ signedIn: frameOf(s), log: null, action }));
        return;
      }
      const cursor = typeof req.query.cursor === 'string' ? req.query.cursor : '';
      const answer = await api.audit({ ...s.who, apiKey: s.apiKey }, { ...(action ? { action } : {}), ...(cursor ? { cursor } : {}) });
      if (answer.status >= 500) throw new UpstreamFailure(answer.status, answer.error);
      if (answer.status === 403) {
        html(res, auditPage({ signedIn: frameOf(s), log: 'not-team', action }));
        return;
      }
      if (!answer.body) {
        const notice = { kind: 'error' as const, text: answer.error ?? 'the audit log could not be read' };
        html(res, auditPage({ signedIn: frameOf(s), log: null, action, notice }), answer.status);
        return;
      }
      html(res, auditPage({ signedIn: frameOf(s), log: answer.body, action }));
    }),
  );

  // --- collections ---

  const collectionsOf = async (s: SignedIn) => {
    if (!s.apiKey) return null;
    const answer = await api.collections({ ...s.who, apiKey: s.apiKey });
    if (answer.status >= 500) throw new UpstreamFailure(answer.status, answer.error);
    return answer.body?.collections ?? [];
  };
  app.get(
    '/collections',
    pageRoute(async (req, res) => {
      const s = await signedIn(req, res);
      if (!s) return;
      html(res, collectionsPage({ signedIn: frameOf(s), collections: await collectionsOf(s) }));
    }),
  );
  const startIndex = async (res: Response, s: SignedIn & { apiKey: string }, collectionName: string): Promise<void> => {
    const job = await api.index({ ...s.who, apiKey: s.apiKey }, collectionName);
    if (!job.body) {
      if (job.status >= 500) throw new UpstreamFailure(job.status, job.error);
      html(
        res,
        collectionsPage({
          signedIn: frameOf(s),
          collections: await collectionsOf(s),
          notice: { kind: 'error', text: job.error ?? 'the index job was not started' },
        }),
        job.status,
      );
      return;
    }
    res.redirect(303, `/collections/jobs/${encodeURIComponent(job.body.jobId)}`);
  };
  post('/collections', async (req, res) => {
    const s = await signedInWithKey(req, res);
    if (!s) return;
    const form = { collectionName: field(req, 'collectionName').trim(), projectPath: field(req, 'projectPath').trim() };
    const setup = await api.setupCollection({ ...s.who, apiKey: s.apiKey }, form);
    if (!setup.body) {
      if (setup.status >= 500) throw new UpstreamFailure(setup.status, setup.error);
      html(
        res,
        collectionsPage({
          signedIn: frameOf(s),
          collections: await collectionsOf(s),
          form,
          notice: { kind: 'error', text: setup.error ?? 'the collection was not set up' },
        }),
        setup.status,
      );
      return;
    }
    await startIndex(res, s, form.collectionName);
  });
  post('/collections/index', async (req, res) => {
    const s = await signedInWithKey(req, res);
    if (!s) return;
    await startIndex(res, s, field(req, 'collectionName'));
  });
  post('/collections/delete', async (req, res) => {
    const s = await signedInWithKey(req, res);
    if (!s) return;
    const collectionName = field(req, 'collectionName');
    // The checkbox is required in the form; a request without it (no browser of ours) deletes nothing.
    const answer =
      field(req, 'confirm') === 'yes'
        ? await api.deleteCollection({ ...s.who, apiKey: s.apiKey }, collectionName)
        : { status: 400, body: null, error: 'tick the box to confirm the deletion' };
    if (answer.status >= 500) throw new UpstreamFailure(answer.status, answer.error);
    const notice: Frame['notice'] = answer.body
      ? { kind: 'ok', text: `Collection ${collectionName} is deleted: its index and pushed files are gone; its folder is untouched.` }
      : { kind: 'error', text: answer.error ?? 'the collection was not deleted' };
    html(res, collectionsPage({ signedIn: frameOf(s), collections: await collectionsOf(s), notice }), answer.body ? 200 : answer.status);
  });
  app.get(
    '/collections/jobs/:jobId',
    pageRoute(async (req, res) => {
      const s = await signedInWithKey(req, res);
      if (!s) return;
      const job = await api.job({ ...s.who, apiKey: s.apiKey }, String(req.params.jobId));
      if (!job.body) {
        if (job.status >= 500) throw new UpstreamFailure(job.status, job.error);
        html(res, errorPage({ status: 404, message: 'No index job of yours has that id.', signedIn: frameOf(s) }), 404);
        return;
      }
      html(res, jobPage({ signedIn: frameOf(s), job: job.body }));
    }),
  );

  // --- visual test runs ---

  app.get(
    '/runs',
    pageRoute(async (req, res) => {
      const s = await signedIn(req, res);
      if (!s) return;
      const runId = typeof req.query.runId === 'string' ? req.query.runId.trim() : undefined;
      if (runId !== undefined && s.apiKey) {
        if (isRunId(runId)) {
          res.redirect(303, `/runs/${runId}`);
          return;
        }
        html(
          res,
          runsPage({
            signedIn: frameOf(s),
            connected: true,
            runId,
            notice: { kind: 'error', text: 'A run id is a UUID, as POST /api/glm/test answers it.' },
          }),
          400,
        );
        return;
      }
      if (!s.apiKey) {
        html(res, runsPage({ signedIn: frameOf(s), connected: false }));
        return;
      }
      const listed = await api.runs({ ...s.who, apiKey: s.apiKey });
      if (listed.status >= 500) throw new UpstreamFailure(listed.status, listed.error);
      html(res, runsPage({ signedIn: frameOf(s), connected: true, recent: listed.body?.runs ?? [] }));
    }),
  );
  /** The run for the signed-in key, or null after answering 404 or sending the customer to connect a key. */
  const runOf = async (req: Request, res: Response, s: SignedIn) => {
    if (!s.apiKey) {
      res.redirect(303, '/keys');
      return null;
    }
    const runId = String(req.params.runId);
    const run = isRunId(runId) ? await api.run({ ...s.who, apiKey: s.apiKey }, runId) : undefined;
    if (run && run.status >= 500) throw new UpstreamFailure(run.status, run.error);
    if (!run?.body) {
      html(res, errorPage({ status: 404, message: 'No test run of yours has that id.', signedIn: frameOf(s) }), 404);
      return null;
    }
    return { run: run.body, apiKey: s.apiKey };
  };
  app.get(
    '/runs/:runId',
    pageRoute(async (req, res) => {
      const s = await signedIn(req, res);
      if (!s) return;
      const found = await runOf(req, res, s);
      if (!found) return;
      const decided = typeof req.query.decided === 'string' ? req.query.decided : undefined;
      const notice: Frame['notice'] | undefined = decided ? { kind: 'ok', text: `Recorded: ${decided}.` } : undefined;
      html(res, runPage({ signedIn: frameOf(s), run: found.run, ...(notice ? { notice } : {}) }));
    }),
  );
  // The review page as the vision service renders it (images inline), under that page's own policy:
  // its one style sheet and script by nonce, nothing fetched, no form, no framing.
  app.get(
    '/runs/:runId/review',
    pageRoute(async (req, res) => {
      const s = await signedIn(req, res);
      if (!s) return;
      const found = await runOf(req, res, s);
      if (!found) return;
      const review = await api.reviewPage({ ...s.who, apiKey: found.apiKey }, found.run.runId);
      if (review.status !== 200 || !review.policy) throw new UpstreamFailure(review.status, 'the review page was not rendered');
      res.set('Content-Security-Policy', review.policy);
      html(res, review.html);
    }),
  );
  for (const verb of ['accept', 'reject'] as const) {
    post(`/runs/:runId/snapshots/:snapshot/${verb}`, async (req, res) => {
      const s = await signedIn(req, res);
      if (!s) return;
      const found = await runOf(req, res, s);
      if (!found) return;
      const snapshot = String(req.params.snapshot);
      const answer = await api.decide({ ...s.who, apiKey: found.apiKey }, found.run.runId, snapshot, verb);
      if (!answer.body) {
        if (answer.status >= 500) throw new UpstreamFailure(answer.status, answer.error);
        html(
          res,
          runPage({
            signedIn: frameOf(s),
            run: found.run,
            notice: { kind: 'error', text: answer.error ?? 'the decision was not recorded' },
          }),
          answer.status,
        );
        return;
      }
      res.redirect(303, `/runs/${found.run.runId}?decided=${encodeURIComponent(`${snapshot} ${answer.body.decision}`)}`);
    });
  }

  // --- integration reports ---

  app.get(
    '/reports',
    pageRoute(async (req, res) => {
      const s = await signedIn(req, res);
      if (!s) return;
      html(res, reportsPage({ signedIn: frameOf(s), connected: s.apiKey !== null }));
    }),
  );
  // The report as the integration service renders it, under its own policy (inline styles and data:
  // images only: no script, nothing fetched), with no framing and no form on top.
  app.get(
    '/reports/view',
    pageRoute(async (req, res) => {
      const s = await signedInWithKey(req, res);
      if (!s) return;
      const projectName = typeof req.query.projectName === 'string' ? req.query.projectName.trim() : '';
      const collectionName = typeof req.query.collectionName === 'string' ? req.query.collectionName.trim() : '';
      const form = { projectName, ...(collectionName ? { collectionName } : {}) };
      const report = await api.report({ ...s.who, apiKey: s.apiKey }, form);
      if (report.status >= 500) throw new UpstreamFailure(report.status, 'the report was not rendered');
      if (report.status !== 200) {
        let text = 'the report was not rendered';
        try {
          text = (JSON.parse(report.html) as { error?: string }).error ?? text;
        } catch {}
        html(res, reportsPage({ signedIn: frameOf(s), connected: true, form, notice: { kind: 'error', text } }), report.status);
        return;
      }
      res.set('Content-Security-Policy', `${REPORT_POLICY}; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`);
      html(res, report.html);
    }),
  );

  // --- team workspace (team-pages.routes.ts) ---

  const pagesKit = {
    secret,
    api,
    html,
    pageRoute,
    post,
    preSession,
    fail: (status: number, error: string | undefined): never => {
      throw new UpstreamFailure(status, error);
    },
  };
  mountTeamPages(app, pagesKit);
  mountVerifyPages(app, pagesKit);
  mountSsoLinkPages(app, pagesKit);
  mountAssistantPages(app, {
    ...pagesKit,
    keyOf: (req, accountId) => openKey(secret, accountId, readCookies(req.get('cookie')).get(KEY_COOKIE)),
    accountsPublicUrl: deps.accountsPublicUrl,
  });

  // Last: an HTML 404 for the rest (the platform's JSON 404 is for API callers).
  app.use((req, res) => {
    html(res, errorPage({ status: 404, message: `There is no page at ${req.path}.` }), 404);
  });
}

/** A service the console calls failed (5xx): the customer sees a generic page; the log has the status. */
export class UpstreamFailure extends Error {
  readonly status: number;
  constructor(status: number, message: string | undefined) {
    super(message ?? `upstream answered ${status}`);
    this.name = 'UpstreamFailure';
    this.status = status;
  }
}
