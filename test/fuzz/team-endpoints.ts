import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { FLOW_COOKIE, sealFlow } from '../../services/accounts/sso/flow-cookie.ts';
import { jsonOf } from './arbitraries.ts';
import type { EndpointKit, FuzzContext, Headers } from './endpoint-kit.ts';
import { hostileEmail, invitationFlood } from './hostile-content.ts';

const b64 = (text: string) => Buffer.from(text).toString('base64url');
/** A valid value four times in five: a filter that fails parsing stops the request before the code behind it. */
const mostly = (valid: fc.Arbitrary<string>, hostile: fc.Arbitrary<string>) =>
  fc.oneof({ arbitrary: valid, weight: 4 }, { arbitrary: hostile, weight: 1 });
/** Encodes a query value as a browser would, keeping what the fuzz put in (bidi, U+2028, huge). */
const q = (value: string) => encodeURIComponent(value);

/**
 * The team tier's routes: the workspace (keys service), its single sign-on settings, the audit log,
 * and the sign-on itself (accounts service). Each with the owner's session (the code behind the
 * checks runs), the member's (which the same routes refuse or narrow), and wrong ones.
 */
export function teamEndpoints(ctx: FuzzContext, kit: EndpointKit): void {
  const { add, word, email } = kit;
  const teamId = ctx.team.subscriptionId;
  const owner = kit.bearer(ctx.account.token);
  const member = kit.bearer(ctx.member.token);
  const sessions = fc.oneof(
    { arbitrary: kit.authArb(owner, kit.wrongAuth), weight: 3 },
    { arbitrary: kit.authArb(member, kit.wrongAuth), weight: 1 },
  );
  const team = jsonOf(
    fc.oneof(
      { arbitrary: fc.constant(teamId), weight: 6 },
      { arbitrary: word, weight: 1 },
      { arbitrary: fc.constant(ctx.revocable), weight: 1 },
    ),
  );
  const teamQuery = fc.constantFrom(
    `?subscriptionId=${q(teamId)}`,
    `?subscriptionId=${q(teamId)}`,
    `?subscriptionId=${q(teamId)}`,
    '?subscriptionId=',
    '?subscriptionId[$ne]=x',
    '?subscriptionId[]=a&subscriptionId[]=b',
    '',
    `?subscriptionId=${q(ctx.revocable)}`,
    `?subscriptionId=${q(teamId)}&subscriptionId=${q(ctx.revocable)}`,
    `?subscriptionId=${'9'.repeat(300)}`,
    `?subscriptionId=${q(`${teamId}\u202e`)}`,
  );
  const idSegment = (real: string[]) =>
    fc.oneof(
      { arbitrary: fc.constantFrom(...real), weight: real.length > 0 ? 2 : 0 },
      { arbitrary: fc.oneof(fc.uuid(), word, fc.constantFrom('%00', '__proto__', 'x'.repeat(3000), '%ZZ', '%E2%80%A8')), weight: 5 },
    );
  const segment = (id: string) => encodeURI(id).replace(/%25/g, '%');
  const anyEmail = fc.oneof(
    { arbitrary: email, weight: 4 },
    { arbitrary: hostileEmail, weight: 3 },
    { arbitrary: fc.constantFrom(ctx.account.email, ctx.member.email, ctx.member.email.toUpperCase(), ctx.leaving.email), weight: 1 },
  );

  add('GET /teams', 'keys', { template: {}, auth: sessions });
  add('GET /team', 'keys', { template: {}, auth: sessions, path: teamQuery.map((tq) => `/team${tq}`) });
  // 10,000 of these in the full run, each a fresh address from the owner: past the hourly invitation
  // limit (30) at once, and aimed at the workspace's 100-member cap; and lists of up to 10,000 addresses in one body.
  add('POST /team/invitations', 'keys', {
    template: {
      subscriptionId: team,
      email: fc.oneof({ arbitrary: jsonOf(anyEmail), weight: 12 }, { arbitrary: jsonOf(invitationFlood), weight: 1 }),
      role: jsonOf(fc.constantFrom('member', 'admin', 'owner', 'ADMIN', '')),
    },
    auth: sessions,
  });
  add('DELETE /team/invitations/:invitationId', 'keys', {
    template: {},
    auth: sessions,
    path: fc.tuple(idSegment([ctx.team.pendingInvitation]), teamQuery).map(([id, tq]) => `/team/invitations/${segment(id)}${tq}`),
  });
  add('POST /team/invitations/accept', 'keys', {
    template: {
      token: jsonOf(fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{43}$/), word, fc.constantFrom(...ctx.team.secrets.slice(0, 1), ''))),
    },
    auth: sessions,
  });
  add('PUT /team/members/:userId/role', 'keys', {
    template: { subscriptionId: team, role: jsonOf(fc.constantFrom('member', 'admin', 'owner')) },
    auth: sessions,
    path: idSegment([ctx.member.userId, ctx.account.userId]).map((id) => `/team/members/${segment(id)}/role`),
  });

  // Single sign-on settings: issuers the outbound guard refuses (never a request off this machine),
  // domains public, hostile, too many.
  const issuer = fc.constantFrom(
    'https://127.0.0.1/',
    'https://127.0.0.1/',
    'https://localhost:1/',
    'https://localhost:1/',
    'https://10.0.0.1/',
    'https://169.254.169.254/latest',
    'https://[::1]/',
    'https://[fd00::1]/',
    'https://0.0.0.0/',
    'https://2130706433/',
    'http://127.0.0.1:1/',
    'https://user:pass@127.0.0.1/',
    'https://127.0.0.1/?a=1',
    'https://127.0.0.1/#x',
    'ftp://127.0.0.1/',
    'javascript:alert(1)',
    `https://127.0.0.1/${'p'.repeat(600)}`,
    '',
  );
  const domain = fc.oneof(
    fc.constantFrom('acme.test', 'eu.acme.test', 'ACME.TEST', 'gmail.com', 'outlook.com', 'example.test'),
    fc.constantFrom(
      'acme\u202e.test',
      'ac\u2028me.test',
      'xn--80ak6aa92e.com',
      'a',
      '10.0.0.1',
      'acme.test.',
      '-a.test',
      `${'d'.repeat(64)}.test`,
      '*.acme.test',
    ),
    word,
  );
  add('PUT /team/sso', 'keys', {
    template: {
      subscriptionId: team,
      issuer: jsonOf(issuer),
      clientId: jsonOf(mostly(word, fc.constant('x'.repeat(501)))),
      clientSecret: jsonOf(mostly(word, fc.constant('s'.repeat(1001)))),
      domains: jsonOf(
        fc.oneof(
          { arbitrary: fc.array(fc.constantFrom('acme.test', 'eu.acme.test', 'example.test'), { minLength: 1, maxLength: 3 }), weight: 4 },
          { arbitrary: fc.array(domain, { minLength: 1, maxLength: 3 }), weight: 2 },
          { arbitrary: fc.array(domain, { minLength: 11, maxLength: 30 }), weight: 1 },
        ),
      ),
    },
    auth: sessions,
  });
  add('GET /team/sso', 'keys', { template: {}, auth: sessions, path: teamQuery.map((tq) => `/team/sso${tq}`) });
  add('DELETE /team/sso', 'keys', { template: {}, auth: sessions, path: teamQuery.map((tq) => `/team/sso${tq}`) });

  // The audit log, with the team's key, the owner's and the member's sessions, and every filter.
  const iso = fc.constantFrom(
    '2020-01-01T00:00:00Z',
    '2026-13-45T99:99:99Z',
    '+275760-09-13T00:00:00.000Z',
    'yesterday',
    '0000-01-01T00:00:00+14:00',
  );
  const cursor = fc.oneof(
    fc.constantFrom(
      b64(JSON.stringify(['2020-01-01T00:00:00Z', 'x'])),
      b64(JSON.stringify(['2020-01-01T00:00:00Z', { $gt: '' }])),
      b64(JSON.stringify([{ $gt: '' }, 'x'])),
      b64(JSON.stringify(['+275760-09-13T00:00:00.001Z', 'x'])),
      b64('['.repeat(5000)),
      b64('{"__proto__":{"a":1}}'),
      '%ZZ',
      'x'.repeat(501),
    ),
    word.map(b64),
  );
  const auditQuery = fc
    .record(
      {
        subscriptionId: mostly(fc.constantFrom(teamId, ctx.revocable), fc.constantFrom('', 'x'.repeat(201))),
        actor: mostly(fc.constantFrom(ctx.account.userId, ctx.member.userId), fc.oneof(word, fc.constant(''))),
        action: mostly(
          fc.constantFrom('key.', 'key.rotated', 'team.', 'team.member-invited', 'account.'),
          fc.constantFrom('KEY.', '.*', 'a'.repeat(300)),
        ),
        from: mostly(fc.constantFrom('2020-01-01T00:00:00Z', '2026-01-01T00:00:00+14:00'), iso),
        to: mostly(fc.constantFrom('2099-01-01T00:00:00Z'), iso),
        limit: mostly(fc.constantFrom('1', '200'), fc.constantFrom('201', '0', '-1', '1e3', 'NaN')),
        cursor: mostly(fc.constant(b64(JSON.stringify(['2099-01-01T00:00:00Z', 'x']))), cursor),
      },
      { requiredKeys: [] },
    )
    .map((r) => {
      const entries = Object.entries(r);
      return entries.length === 0 ? '' : `?${entries.map(([k, v]) => `${k}=${q(v)}`).join('&')}`;
    });
  add('GET /audit', 'keys', {
    template: {},
    auth: fc.oneof(
      { arbitrary: kit.keyAuthFor('GET /audit'), weight: 1 },
      { arbitrary: kit.authArb(kit.keyAuth(ctx.keys['POST /keys/rotate']!.apiKey), kit.wrongAuth), weight: 1 },
      { arbitrary: sessions, weight: 2 },
    ),
    path: auditQuery.map((aq) => `/audit${aq}`),
  });

  // The sign-on: start (by e-mail; a subscription id too, while the route takes one), the provider's
  // answer with forged state and flow cookies, and the console's exchange of a one-time code.
  const binding = fc.oneof(fc.stringMatching(/^[\w-]{43}$/), word, fc.constant('b'.repeat(5000)));
  const startQuery = fc
    .record(
      {
        email: fc.oneof(anyEmail, fc.constantFrom('it@acme.test', 'a@gmail.com')),
        binding,
        return: fc.constantFrom('console', 'https://evil.example', ''),
        // Gone from the route (a team is found by a proven domain only): sent anyway, it must find nothing.
        subscriptionId: fc.constantFrom(teamId, ctx.revocable, '1', '0', '-1', '999999999'),
        link: fc.oneof(
          { arbitrary: fc.constantFrom(...ctx.linkTickets), weight: ctx.linkTickets.length > 0 ? 3 : 0 },
          { arbitrary: fc.constantFrom('', 'x'.repeat(2001), '%ZZ'), weight: 1 },
          { arbitrary: word.map(b64), weight: 1 },
        ),
      },
      { requiredKeys: ['binding'] },
    )
    .map(
      (r) =>
        `?${Object.entries(r)
          .map(([k, v]) => `${k}=${q(v)}`)
          .join('&')}`,
    );
  add('GET /auth/sso/start', 'accounts', { template: {}, path: startQuery.map((sq) => `/auth/sso/start${sq}`) });

  // Flows sealed with the real JWT secret (a forger who had it), so the callback's later checks run:
  // a state that matches, one that does not, a workspace without single sign-on, one long expired.
  const state = 'fuzz-state-known';
  const sealed = (subscriptionId: string, expiresAt: number) =>
    sealFlow(ctx.jwtSecret, {
      subscriptionId,
      codeVerifier: randomBytes(32).toString('base64url'),
      state,
      nonce: 'fuzz-nonce',
      binding: 'b'.repeat(43),
      expiresAt,
    });
  const future = Date.now() + 7 * 86_400_000;
  const flows = [sealed(teamId, future), sealed(ctx.revocable, future), sealed('no-such-team', future), sealed(teamId, Date.now() - 1)];
  const flowCookie = fc.oneof(
    { arbitrary: fc.constantFrom(...flows), weight: 6 },
    {
      arbitrary: fc.constantFrom(
        '',
        'f1.',
        'f1.AAAA',
        `f1.${'A'.repeat(40)}`,
        `f2.${flows[0]!.slice(3)}`,
        `${flows[0]!.slice(0, -2)}AA`,
        `f1.${randomBytes(3000).toString('base64url')}`,
        'f1.%ZZ',
        '"f1.x"',
      ),
      weight: 3,
    },
    { arbitrary: word.map((w) => `f1.${b64(w)}`), weight: 1 },
  );
  const cookieAuth = fc.oneof(
    { arbitrary: flowCookie.map((v): Headers => [['Cookie', `${FLOW_COOKIE}=${v}`]]), weight: 8 },
    { arbitrary: fc.constant<Headers>([]), weight: 1 },
    {
      arbitrary: fc.tuple(flowCookie, flowCookie).map(([a, b]): Headers => [['Cookie', `${FLOW_COOKIE}=${a}; ${FLOW_COOKIE}=${b}`]]),
      weight: 1,
    },
    {
      arbitrary: flowCookie.map(
        (v): Headers => [
          ['Cookie', `x=1; ${FLOW_COOKIE}=${v}`],
          ['Cookie', `${FLOW_COOKIE}=garbage`],
        ],
      ),
      weight: 1,
    },
  );
  const callbackQuery = fc
    .record(
      {
        code: fc.oneof(word, fc.constantFrom('', 'c'.repeat(5000))),
        state: fc.oneof(
          { arbitrary: fc.constant(state), weight: 3 },
          { arbitrary: word, weight: 1 },
          { arbitrary: fc.constant(`${state}\u2028`), weight: 1 },
        ),
        error: fc.constantFrom('access_denied', 'login_required', '', '<script>'),
        iss: fc.constantFrom('https://127.0.0.1/', 'https://evil.example', ''),
      },
      { requiredKeys: [] },
    )
    .map((r) => Object.entries(r).map(([k, v]) => `${k}=${q(v)}`))
    .chain((parts) =>
      fc.constantFrom(
        parts.length === 0 ? '' : `?${parts.join('&')}`,
        `?${[...parts, 'state=a', 'state=b'].join('&')}`,
        `?${[...parts, 'code[$gt]='].join('&')}`,
      ),
    );
  add('GET /auth/sso/callback', 'accounts', {
    template: {},
    auth: cookieAuth,
    path: callbackQuery.map((cq) => `/auth/sso/callback${cq}`),
  });
  add(
    'POST /auth/sso/exchange',
    'accounts',
    {
      template: {
        code: jsonOf(fc.oneof(fc.stringMatching(/^[\w-]{43}$/), word, fc.constant('c'.repeat(201)))),
        binding: jsonOf(binding),
      },
    },
    kit.issuedField('token'),
  );

  // Linking an account to its team's provider: by its owner, logged in (sso-link.routes.ts).
  const code = fc.oneof(fc.stringMatching(/^[\w-]{43}$/), word, fc.constant('c'.repeat(201)));
  add('POST /auth/sso/link/start', 'accounts', { template: { binding: jsonOf(binding) }, auth: sessions });
  add('POST /auth/sso/link/finish', 'accounts', { template: { code: jsonOf(code), binding: jsonOf(binding) } });
  add('GET /auth/sso/links', 'accounts', { template: {}, auth: sessions });
  add('DELETE /auth/sso/links/:id', 'accounts', {
    template: {},
    auth: sessions,
    path: idSegment([ctx.account.userId]).map((id) => `/auth/sso/links/${segment(id)}`),
  });

  // A domain's proof: an e-mail round trip to an address at the domain, asked by the owner, confirmed with its token.
  add('POST /team/sso/domain-proofs', 'keys', {
    template: {
      subscriptionId: team,
      domain: jsonOf(domain),
      address: jsonOf(fc.oneof(fc.constantFrom('it@acme.test', 'it@ACME.TEST', 'it@sub.acme.test', 'it@acme.test.evil.example'), anyEmail)),
    },
    auth: sessions,
  });
  add('POST /team/sso/domain-proofs/confirm', 'keys', {
    template: { token: jsonOf(fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{43}$/), word)) },
    auth: sessions,
  });

  // Last of the team's: removals (the member may be removed, so it comes after everything the member's token reads).
  add('DELETE /team/members/:userId', 'keys', {
    template: {},
    auth: sessions,
    path: fc.tuple(idSegment([ctx.member.userId, ctx.account.userId]), teamQuery).map(([id, tq]) => `/team/members/${segment(id)}${tq}`),
  });
}
