import type { Express, Request, RequestHandler, Response } from 'express';
import type { MeAnswer } from '../accounts/accounts.api.ts';
import { clientIp } from '../platform/http/client-ip.ts';
import { INVITATION_TOKEN } from '../teams/invitation-token.ts';
import { DOMAIN_PROOF_TOKEN } from '../teams/sso-domain-proof-token.ts';
import { goingOnPage } from './pages/auth.page.ts';
import type { Frame } from './pages/layout.ts';
import { teamPage, type TeamView } from './pages/team.page.ts';
import { joinRefusedPage, joinSignedInPage, joinSignedOutPage } from './pages/team-join.page.ts';
import { verifyRefusedPage, verifySignedInPage, verifySignedOutPage } from './pages/sso-verify.page.ts';
import { SESSION_COOKIE, clearedCookie, csrfToken, readCookies } from './session.ts';
import { TEAM_DONE, domainProofRefusal, invitationRefusal } from './team-refusals.ts';
import type { Answer, Credentials, Upstream } from './upstream.ts';

/** What the team pages use of the console's routes (console.routes.ts): its answers, forms and failures. */
export interface TeamPagesKit {
  secret: string;
  api: Upstream;
  html(res: Response, body: string, status?: number): void;
  pageRoute(handler: (req: Request, res: Response) => Promise<void>): RequestHandler;
  /** A POST whose CSRF token was checked before the handler runs. */
  post(path: string, handler: (req: Request, res: Response) => Promise<void>, signedOut?: boolean): void;
  /** The pre-session of a signed-out form (its CSRF token's session). */
  preSession(req: Request, res: Response): string;
  /** A service failed (5xx): the console's generic error page. */
  fail(status: number, error: string | undefined): never;
}

interface Customer {
  me: MeAnswer;
  csrf: string;
  who: Credentials;
  frame: NonNullable<Frame['signedIn']>;
}

const field = (req: Request, name: string): string => {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
};
const query = (req: Request, name: string): string => (typeof req.query[name] === 'string' ? (req.query[name] as string) : '');

/**
 * The team workspace pages: /team (GET /teams and GET /team of the keys service, and a POST form
 * for each change the team routes make) and /team/join, the page of the invitation e-mail's link.
 * Every call takes the account token, as a customer's code would.
 */
export function mountTeamPages(app: Express, kit: TeamPagesKit): void {
  const { api, html } = kit;

  /** The signed-in customer, or null (no session, or one that no longer works: its cookie is cleared). */
  const customer = async (req: Request, res: Response): Promise<Customer | null> => {
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

  /** Fails on a 5xx; otherwise hands the answer back. */
  const checked = <T>(answer: Answer<T>): Answer<T> => {
    if (answer.status >= 500) kit.fail(answer.status, answer.error);
    return answer;
  };

  /** Renders /team for a workspace (the chosen, or the only one), with a notice. */
  const renderTeam = async (
    res: Response,
    c: Customer,
    chosen: string,
    extra: Pick<TeamView, 'notice' | 'invite'> = {},
    status = 200,
  ): Promise<void> => {
    const listed = checked(await api.teams(c.who));
    const workspaces = listed.body?.workspaces ?? [];
    const id = workspaces.some((w) => w.subscriptionId === chosen) ? chosen : workspaces.length === 1 ? workspaces[0]!.subscriptionId : '';
    const team = id ? checked(await api.team(c.who, id)) : undefined;
    let notice = extra.notice;
    if (team && !team.body) notice ??= { kind: 'error', text: team.error ?? 'the workspace could not be read' };
    if (chosen && !id) notice ??= { kind: 'error', text: 'You are in no workspace of that id.' };
    html(
      res,
      teamPage({
        signedIn: c.frame,
        userId: c.me.id,
        workspaces,
        team: team?.body ?? null,
        ...(notice ? { notice } : {}),
        ...(extra.invite ? { invite: extra.invite } : {}),
      }),
      status,
    );
  };

  /** After a change: back to the workspace with a fixed notice; a refusal shows on the page, with its status. */
  const afterChange = async (res: Response, c: Customer, subscriptionId: string, answer: Answer<unknown>, done: string, extra = {}) => {
    checked(answer);
    if (answer.status >= 200 && answer.status < 300) {
      res.redirect(303, `/team?${new URLSearchParams({ subscriptionId, done })}`);
      return;
    }
    const text =
      answer.status === 429
        ? `Too many invitations from this team this hour; try again in ${answer.retryAfter ?? 'a while'} seconds.`
        : (answer.error ?? 'the change was not made');
    await renderTeam(res, c, subscriptionId, { notice: { kind: 'error', text }, ...extra }, answer.status);
  };

  app.get(
    '/team',
    kit.pageRoute(async (req, res) => {
      const c = await customer(req, res);
      if (!c) {
        res.redirect(303, `/login?${new URLSearchParams({ next: '/team' })}`);
        return;
      }
      const done = query(req, 'done');
      const notice: Frame['notice'] | undefined = Object.hasOwn(TEAM_DONE, done) ? { kind: 'ok', text: TEAM_DONE[done]! } : undefined;
      await renderTeam(res, c, query(req, 'subscriptionId'), notice ? { notice } : {});
    }),
  );

  /** A team form's POST: signed in (else to the log-in page), the workspace from the form. */
  const teamPost = (path: string, handler: (req: Request, res: Response, c: Customer, subscriptionId: string) => Promise<void>) =>
    kit.post(path, async (req, res) => {
      const c = await customer(req, res);
      if (!c) {
        res.redirect(303, '/login');
        return;
      }
      await handler(req, res, c, field(req, 'subscriptionId'));
    });

  teamPost('/team/invite', async (req, res, c, subscriptionId) => {
    const email = field(req, 'email').trim();
    const role = field(req, 'role') === 'admin' ? 'admin' : 'member';
    const answer = await api.invite(c.who, { subscriptionId, email, role });
    await afterChange(res, c, subscriptionId, answer, 'invited', { invite: { email, role } });
  });
  teamPost('/team/invitations/withdraw', async (req, res, c, subscriptionId) => {
    await afterChange(res, c, subscriptionId, await api.withdrawInvitation(c.who, subscriptionId, field(req, 'invitationId')), 'withdrawn');
  });
  teamPost('/team/members/role', async (req, res, c, subscriptionId) => {
    const role = field(req, 'role') === 'admin' ? 'admin' : 'member';
    await afterChange(res, c, subscriptionId, await api.changeRole(c.who, subscriptionId, field(req, 'userId'), role), 'role');
  });
  teamPost('/team/members/remove', async (req, res, c, subscriptionId) => {
    await afterChange(res, c, subscriptionId, await api.removeMember(c.who, subscriptionId, field(req, 'userId')), 'removed');
  });
  teamPost('/team/sso/domain-proofs', async (req, res, c, subscriptionId) => {
    const body = { subscriptionId, domain: field(req, 'domain').trim(), address: field(req, 'address').trim() };
    const answer = checked(await api.requestDomainProof(c.who, body));
    if (answer.status === 429) {
      const text = `Too many proof e-mails from this team this hour; try again in ${answer.retryAfter ?? 'a while'} seconds.`;
      await renderTeam(res, c, subscriptionId, { notice: { kind: 'error', text } }, 429);
      return;
    }
    await afterChange(res, c, subscriptionId, answer, 'proof-sent');
  });
  teamPost('/team/leave', async (_req, res, c, subscriptionId) => {
    const answer = checked(await api.removeMember(c.who, subscriptionId, c.me.id));
    if (answer.status === 204) {
      res.redirect(303, '/team?done=left');
      return;
    }
    await renderTeam(res, c, subscriptionId, { notice: { kind: 'error', text: answer.error ?? 'you did not leave' } }, answer.status);
  });

  // --- the invitation's link ---

  // The token is a secret: it is never logged (the console logs no URL), goes into no other URL
  // than this page's own, and no page sends a Referer (Referrer-Policy: no-referrer on every answer).
  app.get(
    '/team/join',
    kit.pageRoute(async (req, res) => {
      const token = query(req, 'token');
      if (!INVITATION_TOKEN.test(token)) {
        html(res, joinRefusedPage({ text: invitationRefusal(400, undefined, '') }), 400);
        return;
      }
      const hasSession = readCookies(req.get('cookie')).has(SESSION_COOKIE);
      // A link followed from another site (a webmail) arrives without the SameSite=Strict session: one
      // hop through this page itself, a navigation the console's page starts, brings it along.
      if (!hasSession && req.get('sec-fetch-site') === 'cross-site') {
        const self = `/team/join?${new URLSearchParams({ token })}`;
        html(
          res,
          goingOnPage({
            title: 'Opening your invitation',
            text: 'Your invitation opens next.',
            to: self,
            linkText: 'Open your invitation',
          }),
        );
        return;
      }
      const c = await customer(req, res);
      if (!c) {
        html(
          res,
          joinSignedOutPage({ token, csrf: csrfToken(kit.secret, kit.preSession(req, res)), newAccount: query(req, 'account') === 'new' }),
        );
        return;
      }
      html(res, joinSignedInPage({ signedIn: c.frame, email: c.me.email, token }));
    }),
  );
  kit.post('/team/join', async (req, res) => {
    const c = await customer(req, res);
    if (!c) {
      res.redirect(303, '/login');
      return;
    }
    const token = field(req, 'token');
    const answer = INVITATION_TOKEN.test(token) ? checked(await api.acceptInvitation(c.who, token)) : undefined;
    if (!answer?.body) {
      const text = invitationRefusal(answer?.status ?? 400, answer?.code, c.me.email);
      html(res, joinRefusedPage({ signedIn: c.frame, text }), answer?.status ?? 400);
      return;
    }
    res.redirect(303, `/team?${new URLSearchParams({ subscriptionId: answer.body.subscriptionId, done: 'joined' })}`);
  });

  // --- a single sign-on domain's proof link ---

  // Like the invitation's: the token is never logged and goes into no other URL. Opening the page
  // confirms nothing (mail scanners follow links); the owner's POST does.
  app.get(
    '/team/sso/verify',
    kit.pageRoute(async (req, res) => {
      const token = query(req, 'token');
      if (!DOMAIN_PROOF_TOKEN.test(token)) {
        html(res, verifyRefusedPage({ text: domainProofRefusal(400, undefined, '') }), 400);
        return;
      }
      const hasSession = readCookies(req.get('cookie')).has(SESSION_COOKIE);
      if (!hasSession && req.get('sec-fetch-site') === 'cross-site') {
        const self = `/team/sso/verify?${new URLSearchParams({ token })}`;
        html(
          res,
          goingOnPage({ title: 'Opening the proof link', text: 'The proof link opens next.', to: self, linkText: 'Open the proof link' }),
        );
        return;
      }
      const c = await customer(req, res);
      if (!c) {
        html(res, verifySignedOutPage({ token, csrf: csrfToken(kit.secret, kit.preSession(req, res)) }));
        return;
      }
      html(res, verifySignedInPage({ signedIn: c.frame, email: c.me.email, token }));
    }),
  );
  kit.post('/team/sso/verify', async (req, res) => {
    const c = await customer(req, res);
    if (!c) {
      res.redirect(303, '/login');
      return;
    }
    const token = field(req, 'token');
    const answer = DOMAIN_PROOF_TOKEN.test(token) ? checked(await api.confirmDomainProof(c.who, token)) : undefined;
    if (!answer?.body) {
      const text = domainProofRefusal(answer?.status ?? 400, answer?.code, c.me.email);
      html(res, verifyRefusedPage({ signedIn: c.frame, text }), answer?.status ?? 400);
      return;
    }
    res.redirect(303, `/team?${new URLSearchParams({ subscriptionId: answer.body.subscriptionId, done: 'domain-proven' })}`);
  });
}
