import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { sealKey } from '../../services/console/key-cookie.ts';
import { KEY_COOKIE, PRE_SESSION_COOKIE, SESSION_COOKIE, csrfToken } from '../../services/console/session.ts';
import { BINDING_COOKIE } from '../../services/console/sso-binding.ts';
import type { EndpointKit, FuzzAccount, FuzzContext, Headers } from './endpoint-kit.ts';
import { formBodyArb, formEncode, formEncodingArb, type FormTemplate } from './form-bodies.ts';
import { hostileEmail, hostileNext, invitationFlood } from './hostile-content.ts';

/** Who a console request comes as: the cookies it sends and the form's CSRF token. */
interface Visitor {
  cookies: fc.Arbitrary<Headers>;
  csrf: fc.Arbitrary<string>;
}

const cookieHeader = (...pairs: [string, string][]): Headers => [['Cookie', pairs.map(([k, v]) => `${k}=${v}`).join('; ')]];

/**
 * The console (services/console): every page (GET) and every form (POST), as a browser signed in
 * would send them (its session cookie, its sealed key cookie and the form's CSRF token, made with
 * CONSOLE_SECRET as the console makes them), and as a forger would (no token, another session's,
 * a cookie sealed for someone else, garbage). Pages carry hostile queries: `next` values far past
 * 2 KiB and in every spelling of another origin, invitation tokens, sign-on codes and refusals.
 * The list is data: a page is a path and its query, a form a path and its fields.
 */
export function consoleEndpoints(ctx: FuzzContext, kit: EndpointKit): void {
  const secret = ctx.consoleSecret;
  const { word } = kit;
  const csrfOf = (session: string) => csrfToken(secret, session);
  const consoleKey = ctx.keys.console!.apiKey;
  const sealedFor = (a: FuzzAccount, apiKey: string) => sealKey(secret, a.userId, apiKey);
  const memberKey = ctx.team.secrets[1];

  const garbageCookies = fc.oneof(
    kit.garbageToken.map((t) => cookieHeader([SESSION_COOKIE, t.replace(/[;\s]/g, '')])),
    fc.constantFrom<Headers>(
      [],
      cookieHeader([KEY_COOKIE, 'k1.AAAA']),
      cookieHeader([SESSION_COOKIE, 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.']),
      cookieHeader([SESSION_COOKIE, '']),
      cookieHeader([SESSION_COOKIE, 'x'.repeat(9000)]),
      // A key sealed for the owner, under the member's session: it must not open.
      cookieHeader([SESSION_COOKIE, ctx.member.token], [KEY_COOKIE, sealedFor(ctx.account, consoleKey)]),
      cookieHeader([SESSION_COOKIE, 'garbage'], [SESSION_COOKIE, ctx.account.token]),
      [
        ['Cookie', `${SESSION_COOKIE}=${ctx.account.token}`],
        ['Cookie', `${SESSION_COOKIE}=garbage`],
      ],
      [['Cookie', `${SESSION_COOKIE}=${ctx.account.token}; ${KEY_COOKIE}=k1.${randomBytes(200).toString('base64url')}`]],
      [['Cookie', ';;;=;=x;'.repeat(200)]],
    ),
  );
  const garbageCsrf = fc.oneof(word, fc.constantFrom('', 'x'.repeat(5000), csrfOf(''), csrfOf('garbage')));

  /** Signed in as `a`, its key cookie (sealed for it) when there is one: the real thing mostly. */
  const signedIn = (a: FuzzAccount, apiKey: string | undefined, others: Visitor[] = []): Visitor => {
    const real = apiKey
      ? fc.constantFrom(
          cookieHeader([SESSION_COOKIE, a.token], [KEY_COOKIE, sealedFor(a, apiKey)]),
          cookieHeader([SESSION_COOKIE, a.token]),
        )
      : fc.constant(cookieHeader([SESSION_COOKIE, a.token]));
    return {
      cookies: fc.oneof({ arbitrary: real, weight: 10 }, ...others.map((o) => ({ arbitrary: o.cookies, weight: 2 })), {
        arbitrary: garbageCookies,
        weight: 3,
      }),
      csrf: fc.oneof({ arbitrary: fc.constant(csrfOf(a.token)), weight: 12 }, ...others.map((o) => ({ arbitrary: o.csrf, weight: 2 })), {
        arbitrary: garbageCsrf,
        weight: 2,
      }),
    };
  };
  const memberVisitor = signedIn(ctx.member, memberKey);
  const owner = signedIn(ctx.account, consoleKey, [memberVisitor]);
  const ownerRotating = signedIn(ctx.account, ctx.keys['console rotate']!.apiKey);
  const member = signedIn(ctx.member, memberKey, [owner]);
  const unverified = signedIn(ctx.unverified, undefined, [owner]);
  const ending = (name: string) => signedIn(ctx.enders[name]!, undefined);
  // Before any session: the pre-session cookie the form came with, and its token.
  const preSession = randomBytes(24).toString('base64url');
  const signedOut: Visitor = {
    cookies: fc.oneof(
      { arbitrary: fc.constant(cookieHeader([PRE_SESSION_COOKIE, preSession])), weight: 10 },
      { arbitrary: fc.constant(cookieHeader([PRE_SESSION_COOKIE, preSession], [SESSION_COOKIE, ctx.account.token])), weight: 1 },
      { arbitrary: fc.constant(cookieHeader([PRE_SESSION_COOKIE, 'short'])), weight: 1 },
      { arbitrary: garbageCookies, weight: 3 },
    ),
    csrf: fc.oneof({ arbitrary: fc.constant(csrfOf(preSession)), weight: 12 }, { arbitrary: garbageCsrf, weight: 2 }),
  };

  // --- pages ---
  const next = hostileNext.map((n) => `next=${formEncode(n)}`);
  const runId = fc.oneof(fc.uuid(), word.map(formEncode), fc.constantFrom('%ZZ', '%00', 'x'.repeat(3000), '..%2f..%2f'));
  const pages: [string, fc.Arbitrary<string>, Visitor][] = [
    ['GET /', fc.constant('/'), owner],
    ['GET /console.css', fc.constantFrom('/console.css', '/console.css?x=%ZZ'), signedOut],
    ['GET /signup', next.map((n) => `/signup?${n}`), signedOut],
    [
      'GET /login',
      fc.oneof(
        next.map((n) => `/login?${n}&out=1`),
        next.map((n) => `/login?${n}&out=all`),
        next.map((n) => `/login?${n}`),
      ),
      signedOut,
    ],
    ['GET /pricing', fc.constantFrom('/pricing', '/pricing?welcome=1', '/pricing?welcome[]=1'), owner],
    ['GET /account', fc.constantFrom('/account', '/account?changed=1'), owner],
    ['GET /keys', fc.constantFrom('/keys', '/keys?connected=1', '/keys?disconnected=1'), owner],
    ['GET /usage', fc.constant('/usage'), owner],
    [
      'GET /audit',
      fc
        .tuple(fc.constantFrom('key.', 'team.', 'x', '', '%ZZ'), fc.oneof(word.map(formEncode), fc.constantFrom('', 'x'.repeat(600))))
        .map(([a, c]) => `/audit?action=${a}&cursor=${c}`),
      owner,
    ],
    ['GET /collections', fc.constant('/collections'), owner],
    ['GET /collections/jobs/:jobId', fc.oneof(fc.constant(ctx.jobId), runId).map((id) => `/collections/jobs/${id}`), owner],
    [
      'GET /runs',
      fc.oneof(
        fc.constant('/runs'),
        runId.map((id) => `/runs?runId=${id}`),
      ),
      owner,
    ],
    ['GET /runs/:runId', runId.map((id) => `/runs/${id}?decided=${formEncode('\u202eok')}`), owner],
    ['GET /runs/:runId/review', runId.map((id) => `/runs/${id}/review`), owner],
    ['GET /reports', fc.constant('/reports'), owner],
    [
      'GET /reports/view',
      fc
        .tuple(fc.oneof(word, fc.constantFrom('', '<script>', 'x'.repeat(3000))), fc.constantFrom(ctx.collection, '', 'nope', '..'))
        .map(([p, c]) => `/reports/view?projectName=${formEncode(p)}&collectionName=${formEncode(c)}`),
      owner,
    ],
    [
      'GET /team',
      fc
        .tuple(
          fc.constantFrom(ctx.team.subscriptionId, ctx.revocable, '', 'x'.repeat(300)),
          fc.constantFrom('invited', 'left', 'x', '__proto__', 'toString', ''),
        )
        .map(([s, d]) => `/team?subscriptionId=${formEncode(s)}&done=${d}`),
      { cookies: fc.oneof(owner.cookies, member.cookies), csrf: owner.csrf },
    ],
    [
      'GET /team/join',
      fc
        .tuple(
          fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{43}$/), fc.constantFrom(...ctx.team.secrets.slice(0, 1), '', 'x'.repeat(3000), '%00')),
          fc.constantFrom('', '&account=new', '&account=new&account=old', '&token=second'),
        )
        .map(([t, extra]) => `/team/join?token=${formEncode(t)}${extra}`),
      member,
    ],
    [
      'GET /verify',
      fc
        .tuple(
          fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{43}$/), fc.constantFrom(ctx.unverified.verifyToken, 'x'.repeat(3000), '%00')),
          fc.constantFrom('', '&token=second'),
        )
        .map(([t, extra]) => `/verify?token=${formEncode(t)}${extra}`),
      unverified,
    ],
    [
      'GET /team/sso/verify',
      fc
        .oneof(fc.stringMatching(/^[A-Za-z0-9_-]{43}$/), fc.constantFrom('', 'x'.repeat(3000), '%00'))
        .map((t) => `/team/sso/verify?token=${formEncode(t)}`),
      owner,
    ],
    ['GET /account/sso', fc.constantFrom('/account/sso', '/account/sso?done=linked', '/account/sso?done=__proto__'), owner],
    [
      'GET /sso/complete',
      fc.oneof(
        fc.oneof(word, fc.constantFrom('', 'c'.repeat(300))).map((c) => `/sso/complete?code=${formEncode(c)}`),
        fc
          .constantFrom(
            'rate_limited',
            'no_team',
            'state_mismatch',
            'flow_expired',
            'provider_refused',
            '__proto__',
            'toString',
            '<script>',
            '',
          )
          .map((e) => `/sso/complete?error=${formEncode(e)}`),
        fc.constant('/sso/complete?code=a&error=no_team'),
      ),
      signedOut,
    ],
  ];
  // A page GET of team join and sign-on completion also crosses sites (a webmail, the provider).
  const crossSite = fc.oneof(
    { arbitrary: fc.constant<Headers>([]), weight: 3 },
    { arbitrary: fc.constantFrom<Headers>([['Sec-Fetch-Site', 'cross-site']], [['Sec-Fetch-Site', 'same-origin']]), weight: 1 },
  );
  const bindingCookie = fc.oneof(
    fc.constant<Headers>([]),
    fc.stringMatching(/^[\w-]{43}$/).map((b): Headers => [['Cookie', `${BINDING_COOKIE}=${b}`]]),
    fc.constant<Headers>([['Cookie', `${BINDING_COOKIE}=short`]]),
  );
  // The join page puts the token its own URL carried into its form (its job): the token sent, not a leak.
  const joinToken = ctx.team.secrets.slice(0, 1);
  for (const [name, path, visitor] of pages) {
    const extra = name === 'GET /sso/complete' ? fc.tuple(bindingCookie, crossSite).map(([a, b]) => [...a, ...b]) : crossSite;
    add(
      `${name} (console)`,
      {
        template: {},
        path,
        auth: fc.tuple(visitor.cookies, extra).map(([a, b]): Headers => [...a, ...b]),
      },
      name === 'GET /team/join'
        ? (status) => (status === 200 ? joinToken : [])
        : name === 'GET /verify'
          ? (status) => (status === 200 ? [ctx.unverified.verifyToken].filter((t) => t !== '') : [])
          : undefined,
    );
  }

  // --- forms ---
  const anyEmail = fc.oneof(
    { arbitrary: kit.email, weight: 4 },
    { arbitrary: hostileEmail, weight: 3 },
    { arbitrary: fc.constantFrom(ctx.account.email, ctx.member.email), weight: 1 },
  );
  const password = fc.string({ minLength: 1, maxLength: 80 });
  const teamField = fc.constantFrom(ctx.team.subscriptionId, ctx.team.subscriptionId, ctx.revocable, '', 'x'.repeat(300));
  const userField = fc.oneof(fc.constantFrom(ctx.member.userId, ctx.account.userId, ''), fc.uuid(), word);
  const forms: [string, FormTemplate, Visitor, number?][] = [
    [
      'POST /signup',
      { name: fc.oneof(word, fc.constantFrom('Zoë', '\u202eeviL')), email: anyEmail, password, next: hostileNext },
      signedOut,
      2,
    ],
    [
      'POST /login',
      {
        email: fc.oneof(anyEmail, fc.constant(ctx.leaving.email)),
        password: fc.oneof(password, fc.constant(ctx.leaving.password)),
        next: hostileNext,
      },
      signedOut,
      2,
    ],
    ['POST /login/sso', { ssoEmail: fc.oneof(anyEmail, fc.constantFrom('it@acme.test', 'a@gmail.com')) }, signedOut],
    ['POST /pricing/checkout', { tier: fc.constantFrom('pro', 'team', 'free', '') }, owner],
    // Never the real current password: a change would end the session the other endpoints use.
    ['POST /account/password', { currentPassword: password, newPassword: password }, owner, 2],
    ['POST /keys/connect', { apiKey: fc.oneof(fc.constant(consoleKey), fc.stringMatching(/^svc_[A-Za-z0-9]{33}$/), word) }, owner],
    ['POST /keys/disconnect', {}, owner],
    ['POST /keys/rotate', { grace: fc.constantFrom('none', 'default', '', 'x') }, ownerRotating],
    [
      'POST /collections',
      {
        collectionName: fc.oneof(kit.collectionName, fc.constant('fuzz-console')),
        projectPath: fc.constantFrom(`${ctx.workspace}/shop`, '/etc', `${ctx.workspace}/../..`, '', 'relative'),
      },
      owner,
    ],
    ['POST /collections/index', { collectionName: fc.oneof(kit.collectionName, fc.constant('fuzz-console')) }, owner],
    [
      'POST /collections/delete',
      { collectionName: fc.oneof(kit.collectionName, fc.constant('fuzz-console')), confirm: fc.constantFrom('yes', 'no', '') },
      owner,
    ],
    [
      'POST /team/invite',
      {
        subscriptionId: teamField,
        email: fc.oneof(
          anyEmail,
          invitationFlood.map((l) => l.join(',')),
        ),
        role: fc.constantFrom('member', 'admin', 'owner'),
      },
      owner,
    ],
    [
      'POST /team/sso/domain-proofs',
      {
        subscriptionId: teamField,
        domain: fc.constantFrom('acme.test', 'gmail.com', 'ACME.TEST', 'acme\u202e.test', ''),
        address: fc.oneof(fc.constantFrom('it@acme.test', 'it@sub.acme.test'), anyEmail),
      },
      owner,
    ],
    ['POST /team/sso/verify', { token: fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{43}$/), fc.constantFrom('', 'x'.repeat(100))) }, owner],
    [
      'POST /team/invitations/withdraw',
      { subscriptionId: teamField, invitationId: fc.oneof(fc.constant(ctx.team.pendingInvitation), fc.uuid(), word) },
      owner,
    ],
    ['POST /team/members/role', { subscriptionId: teamField, userId: userField, role: fc.constantFrom('admin', 'member', 'owner') }, owner],
    [
      'POST /team/join',
      { token: fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{43}$/), fc.constantFrom(...ctx.team.secrets.slice(0, 1), '')) },
      member,
    ],
    ['POST /team/members/remove', { subscriptionId: teamField, userId: userField }, owner],
    ['POST /team/leave', { subscriptionId: teamField }, member],
    [
      'POST /verify',
      { token: fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{43}$/), fc.constantFrom(ctx.unverified.verifyToken, '')) },
      unverified,
    ],
    ['POST /account/verify/resend', {}, unverified],
    ['POST /account/sso/link', {}, owner],
    ['POST /account/sso/unlink', { id: fc.oneof(fc.uuid(), word, fc.constant(ctx.account.userId)) }, owner],
    ['POST /account/logout-all', {}, ending('POST /account/logout-all (console)')],
    ['POST /logout', {}, ending('POST /logout (console)')],
  ];
  const runForm = (verb: string): [string, FormTemplate, Visitor] => [`POST /runs/:runId/snapshots/:snapshot/${verb}`, {}, owner];
  forms.splice(forms.length - 4, 0, runForm('accept'), runForm('reject'));
  for (const [name, fields, visitor, inFlight] of forms) {
    const template = { ...fields, csrf: visitor.csrf };
    const [, path = '/'] = name.split(' ');
    add(`${name} (console)`, {
      template: {},
      body: formBodyArb(template),
      encoding: formEncodingArb,
      auth: visitor.cookies,
      limit: 16 * 1024,
      ...(path.includes(':')
        ? { path: fc.tuple(runId, word).map(([r, s]) => path.replace(':runId', r).replace(':snapshot', formEncode(s))) }
        : {}),
      ...(inFlight ? { inFlight } : {}),
      // The pricing page passes checkout's own 503 on when this deployment sells nothing (endpoints.ts).
      ...(name === 'POST /pricing/checkout'
        ? { designed: (status: number, body: Buffer) => status === 503 && body.includes('checkout is not configured here') }
        : {}),
    });
  }

  function add(name: string, options: Parameters<EndpointKit['add']>[2], issues?: Parameters<EndpointKit['add']>[3]): void {
    kit.add(name, 'console', options, issues);
  }
}
