import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import jwt from 'jsonwebtoken';
import { freePort } from '../../deploy/local/processes.ts';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { projectionCollection } from '../../events/collections.ts';
import { newEvent } from '../../events/envelope.ts';
import { accountsService } from '../../services/accounts/accounts.service.ts';
import { usersProjection } from '../../services/accounts/users.projection.ts';
import { mailerService } from '../../services/mailer/mailer.service.ts';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { eventually, testEnv, testLogger } from '../support/env.ts';
import { mailTo } from '../support/mailpit.ts';
import { replayWith } from '../support/replay.ts';
import { STACK_TIMEOUT_MS, useStack, ownKafka } from '../support/stack.ts';
import { useContractCheck } from '../support/contract-check.ts';

const JWT_SECRET = 'e2e-only-secret-0123456789abcdef-0123456789';

describe('account service: sign-up, login, current user, welcome e-mail (e2e)', function () {
  this.timeout(60_000);
  let stack: StackEnv;
  let platform: RunningPlatform;
  let base: string;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    stack = await useStack();
    const port = await freePort();
    platform = await startServices(
      [accountsService, mailerService],
      testEnv(stack, { JWT_SECRET, ACCOUNTS_PORT: String(port), LOGIN_FAILURES_PER_EMAIL: '3' }),
      testLogger(),
    );
    base = `http://127.0.0.1:${port}`;
  });

  after(async () => {
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
  });

  // Every answer of this spec, checked against the answering face's OpenAPI document.
  useContractCheck();

  const email = () => `user-${randomUUID()}@example.test`;
  const json = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
  };
  const me = async (authorization?: string) => {
    const res = await fetch(`${base}/auth/me`, { headers: authorization ? { authorization } : {} });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
  };

  describe('POST /auth/signup', () => {
    it('creates a free account, answers a 7-day HS256 token, and /auth/me knows it at once', async () => {
      const address = email();
      const res = await json('/auth/signup', { email: `  ${address.toUpperCase()} `, password: 'correct horse', name: 'Ada Lovelace' });
      expect(res.status).to.equal(201);
      // A token in the body: no browser, proxy or CDN may keep a copy.
      expect(res.headers.get('cache-control')).to.equal('no-store');
      const user = res.body.user as Record<string, string>;
      expect(user).to.include({ email: address, name: 'Ada Lovelace', tier: 'free' });
      expect(user.id).to.match(/^[0-9a-f-]{36}$/);
      expect(Object.keys(user)).to.have.members(['id', 'email', 'name', 'tier']);
      const token = res.body.token as string;
      const decoded = jwt.decode(token, { complete: true })!;
      expect(decoded.header.alg).to.equal('HS256');
      const claims = decoded.payload as jwt.JwtPayload;
      expect(claims).to.include({ sub: user.id, email: address, tier: 'free' });
      expect(claims.exp! - claims.iat!).to.equal(7 * 24 * 3600);

      const current = await me(`Bearer ${token}`);
      expect(current.status).to.equal(200);
      expect(current.headers.get('cache-control')).to.equal('no-store');
      expect(current.body).to.include({ id: user.id, email: address, name: 'Ada Lovelace', tier: 'free' });
      expect(new Date(current.body.created_at as string).toISOString()).to.equal(current.body.created_at);
    });

    const invalid: [string, Record<string, unknown>, RegExp][] = [
      ['missing email', { password: 'long enough', name: 'n' }, /email is required/],
      ['invalid email', { email: 'not-an-address', password: 'long enough', name: 'n' }, /email is not a valid address/],
      ['missing password', { email: 'a@example.test', name: 'n' }, /password is required/],
      ['short password', { email: 'a@example.test', password: 'short', name: 'n' }, /at least 8 characters/],
      ['password over 72 bytes', { email: 'a@example.test', password: 'é'.repeat(37), name: 'n' }, /at most 72 bytes/],
      ['missing name', { email: 'a@example.test', password: 'long enough' }, /name is required/],
    ];
    for (const [what, body, message] of invalid) {
      it(`answers 400 with a JSON error for ${what}`, async () => {
        const res = await json('/auth/signup', body);
        expect(res.status).to.equal(400);
        expect(res.body.error).to.match(message);
        expect(JSON.stringify(res.body)).not.to.include('long enough');
      });
    }

    it('accepts a password of exactly 72 bytes', async () => {
      const res = await json('/auth/signup', { email: email(), password: 'é'.repeat(36), name: 'Max' });
      expect(res.status).to.equal(201);
    });

    it('answers 409 for a taken e-mail, compared case-insensitively after trimming', async () => {
      const address = email();
      expect((await json('/auth/signup', { email: address, password: 'password one', name: 'A' })).status).to.equal(201);
      const again = await json('/auth/signup', { email: ` ${address.toUpperCase()}`, password: 'password two', name: 'B' });
      expect(again.status).to.equal(409);
      expect(again.body.error).to.be.a('string');
    });

    it('answers 503 while Kafka is down, and a retry with the same password completes the sign-up once', async function () {
      this.timeout(180_000);
      const kafka = await ownKafka(this);
      const address = email();
      await kafka.stop();
      try {
        const down = await json('/auth/signup', { email: address, password: 'outage password', name: 'Outage' });
        expect(down.status).to.equal(503);
        expect(down.body.code).to.equal('UNAVAILABLE');
      } finally {
        await kafka.start();
      }
      const wrong = await json('/auth/signup', { email: address, password: 'another password', name: 'Outage' });
      expect(wrong.status).to.equal(409);
      const retried = await eventually(
        'the sign-up retried after the restart',
        async () => {
          const res = await json('/auth/signup', { email: address, password: 'outage password', name: 'Outage' });
          return res.status === 201 ? res : undefined;
        },
        60_000,
      );
      expect((await me(`Bearer ${retried.body.token as string}`)).body).to.include({ email: address, tier: 'free' });
      // Retried again (its answer lost too): the same account's answer, not a second account.
      const again = await json('/auth/signup', { email: address, password: 'outage password', name: 'Outage' });
      expect(again.status).to.equal(201);
      expect((again.body.user as { id: string }).id).to.equal((retried.body.user as { id: string }).id);
      expect((await json('/auth/signup', { email: address, password: 'another password', name: 'Outage' })).status).to.equal(409);
      if (stack.MAILPIT_URL) {
        await eventually(
          'the welcome e-mail',
          async () => ((await mailTo(stack.MAILPIT_URL, address)).length > 0 ? true : undefined),
          60_000,
        );
        expect(await mailTo(stack.MAILPIT_URL, address)).to.have.length(1);
      }
    });

    it('answers a retried sign-up whose answer was lost with the same account, only with the same password, and counts wrong ones like logins', async () => {
      const address = email();
      const first = await json('/auth/signup', { email: address, password: 'lost answer', name: 'Lost' });
      expect(first.status).to.equal(201);
      // The client never saw that answer (its replica died after recording it, or the connection was cut) and retries.
      const retried = await json('/auth/signup', { email: address, password: 'lost answer', name: 'Lost' });
      expect(retried.status).to.equal(201);
      expect((retried.body.user as { id: string }).id).to.equal((first.body.user as { id: string }).id);
      expect((await me(`Bearer ${retried.body.token as string}`)).body).to.include({ email: address });
      expect(await platform.runtime.mongo.db.collection('accounts').countDocuments({ email: address })).to.equal(1);
      // Someone else with the address: 409, and their guesses spend the e-mail's login budget (LOGIN_FAILURES_PER_EMAIL, 3 here).
      const guesses: number[] = [];
      for (let i = 0; i < 4; i++)
        guesses.push((await json('/auth/signup', { email: address, password: `wrong guess ${i}`, name: 'Someone Else' })).status);
      expect(guesses).to.deep.equal([409, 409, 409, 429]);
      expect((await json('/auth/login', { email: address, password: 'lost answer' })).status, 'the login budget is the same one').to.equal(
        429,
      );
    });

    for (const passwords of ['the same password', 'different passwords'] as const) {
      it(`lets exactly one of eight concurrent sign-ups of one e-mail through, and only for a stored account (${passwords}, 5 rounds)`, async () => {
        for (let round = 0; round < 5; round++) {
          const address = email();
          const results = await Promise.all(
            Array.from({ length: 8 }, (_, i) =>
              json('/auth/signup', {
                email: address,
                password: passwords === 'the same password' ? 'one password' : `password ${i}`,
                name: `N${i}`,
              }),
            ),
          );
          const stored = await platform.runtime.mongo.db.collection('accounts').find({ email: address }).toArray();
          expect(stored, `round ${round}`).to.have.length(1);
          if (passwords === 'different passwords') {
            // One account; the others are refused, 409, or 429 once their wrong passwords spend the e-mail's login budget.
            expect(
              results.filter((r) => r.status === 201),
              `round ${round}`,
            ).to.have.length(1);
            for (const r of results.filter((x) => x.status !== 201)) expect([409, 429], `round ${round}`).to.include(r.status);
          } else {
            // The same credentials are one sign-up retried: each answer is that account's (201), or, while it
            // is still being recorded, 503 with Retry-After, or 429 with Retry-After when more checks of the
            // e-mail's password run at once than its login budget holds; never a second account.
            for (const r of results) expect([201, 503, 429], `round ${round}`).to.include(r.status);
            for (const r of results.filter((x) => x.status === 201))
              expect((r.body.user as { id: string }).id, `round ${round}`).to.equal(stored[0]!.userId);
          }
          const winner = results.find((r) => r.status === 201)!;
          expect((winner.body.user as { id: string }).id).to.equal(stored[0]!.userId);
          expect((await me(`Bearer ${winner.body.token as string}`)).status).to.equal(200);
        }
      });
    }
  });

  describe('POST /auth/login', () => {
    it('answers a token and the user for the right password', async () => {
      const address = email();
      const created = await json('/auth/signup', { email: address, password: 'right password', name: 'Lin' });
      const res = await json('/auth/login', { email: address.toUpperCase(), password: 'right password' });
      expect(res.status).to.equal(200);
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(res.body.user).to.deep.equal(created.body.user);
      expect((await me(`Bearer ${res.body.token as string}`)).status).to.equal(200);
    });

    it('gives a wrong password and an unknown e-mail the same 401 body', async () => {
      const address = email();
      await json('/auth/signup', { email: address, password: 'right password', name: 'Lin' });
      const wrong = await json('/auth/login', { email: address, password: 'wrong password' });
      const unknown = await json('/auth/login', { email: email(), password: 'wrong password' });
      expect(wrong.status).to.equal(401);
      expect(unknown.status).to.equal(401);
      expect(wrong.body).to.deep.equal(unknown.body);
    });

    it('rate-limits repeated failures for an e-mail with 429 and Retry-After', async () => {
      const address = email();
      await json('/auth/signup', { email: address, password: 'right password', name: 'Lin' });
      for (let i = 0; i < 3; i++) expect((await json('/auth/login', { email: address, password: 'wrong password' })).status).to.equal(401);
      const limited = await json('/auth/login', { email: address, password: 'right password' });
      expect(limited.status).to.equal(429);
      expect(Number(limited.headers.get('retry-after'))).to.be.greaterThan(0);
      expect(limited.body.code).to.equal('RATE_LIMITED');
    });

    it('answers 400 for a body without a password', async () => {
      const res = await json('/auth/login', { email: email() });
      expect(res.status).to.equal(400);
    });
  });

  describe('GET /auth/me', () => {
    let user: { id: string; email: string };
    before(async () => {
      const res = await json('/auth/signup', { email: email(), password: 'password me', name: 'Me' });
      user = res.body.user as { id: string; email: string };
    });
    const now = () => Math.floor(Date.now() / 1000);
    const cases: [string, () => string | undefined, string][] = [
      ['no Authorization header', () => undefined, 'missing bearer token'],
      ['a malformed header', () => 'Token abc', 'malformed authorization header'],
      [
        'an expired token',
        () =>
          `Bearer ${jwt.sign({ sub: user.id, email: user.email, tier: 'free', iat: now() - 3600, exp: now() - 60 }, JWT_SECRET, { algorithm: 'HS256' })}`,
        'token expired',
      ],
      [
        'a token signed with another secret',
        () =>
          `Bearer ${jwt.sign({ sub: user.id, email: user.email, tier: 'free' }, 'another-secret-another-secret-another', { algorithm: 'HS256' })}`,
        'invalid token',
      ],
      [
        'an alg none token',
        () => `Bearer ${jwt.sign({ sub: user.id, email: user.email, tier: 'free' }, '', { algorithm: 'none' })}`,
        'invalid token',
      ],
      [
        'an HS512 token with the right secret',
        () => `Bearer ${jwt.sign({ sub: user.id, email: user.email, tier: 'free' }, JWT_SECRET, { algorithm: 'HS512' })}`,
        'invalid token',
      ],
      ['garbage', () => 'Bearer not.a.jwt', 'invalid token'],
    ];
    for (const [what, header, message] of cases) {
      it(`answers 401 with WWW-Authenticate for ${what}`, async () => {
        const res = await me(header());
        expect(res.status).to.equal(401);
        expect(res.body.error).to.equal(message);
        expect(res.headers.get('www-authenticate')).to.match(/^Bearer realm="svc"/);
      });
    }
  });

  describe('tokens: issuer and audience, tier from the projection, revoked by a password change', () => {
    const signup = async () => {
      const address = email();
      const res = await json('/auth/signup', { email: address, password: 'first password', name: 'Tok' });
      return { address, token: res.body.token as string, user: res.body.user as { id: string; email: string } };
    };
    const changePassword = (token: string, body: unknown) => json('/auth/password', body, { authorization: `Bearer ${token}` });

    it('issues tokens with iss and aud, and refuses a token signed with the right secret that lacks or misstates them', async () => {
      const { token, user } = await signup();
      const claims = { sub: user.id, email: user.email, tier: 'free', ver: 0 };
      const sign = (extra: Record<string, string>) =>
        `Bearer ${jwt.sign({ ...claims, ...extra }, JWT_SECRET, { algorithm: 'HS256', expiresIn: 3600 })}`;
      for (const [what, header] of [
        ['neither', sign({})],
        ['no aud', sign({ iss: 'svc' })],
        ['no iss', sign({ aud: 'svc-api' })],
        ['another audience', sign({ iss: 'svc', aud: 'svc-admin' })],
        ['another issuer', sign({ iss: 'elsewhere', aud: 'svc-api' })],
      ] as const) {
        const res = await me(header);
        expect(res.status, what).to.equal(401);
        expect(res.body.error, what).to.equal('invalid token');
        expect(res.headers.get('www-authenticate'), what).to.match(/error="invalid_token"/);
      }
      expect((await me(sign({ iss: 'svc', aud: 'svc-api' }))).status).to.equal(200);
      expect(jwt.decode(token)).to.include({ iss: 'svc', aud: 'svc-api', ver: 0 });
    });

    it('answers /auth/me with the tier of the users projection after an upgrade, while the token still says free', async () => {
      const { token, user } = await signup();
      const at = new Date();
      await platform.runtime.publisher.publish(
        newEvent('subscription.created', {
          subscriptionId: `sub-${randomUUID()}`,
          customerId: 'cus-1',
          userId: user.id,
          email: user.email,
          name: null,
          variantId: '301789',
          tier: 'pro',
          status: 'active',
          renewsAt: null,
          endsAt: null,
          providerUpdatedAt: at,
          customerPortalUrl: null,
          updatePaymentUrl: null,
        }),
      );
      const upgraded = await eventually('/auth/me at pro', async () => {
        const res = await me(`Bearer ${token}`);
        return res.body.tier === 'pro' ? res : undefined;
      });
      expect(upgraded.status).to.equal(200);
      expect(jwt.decode(token)).to.include({ tier: 'free' });
    });

    it('POST /auth/password refuses older tokens with 401, answers a new token, and only the new password logs in', async () => {
      const { address, token } = await signup();
      const changed = await changePassword(token, { currentPassword: 'first password', newPassword: 'second password' });
      expect(changed.status, JSON.stringify(changed.body)).to.equal(200);
      expect(changed.headers.get('cache-control')).to.equal('no-store');
      const fresh = changed.body.token as string;
      expect(jwt.decode(fresh)).to.include({ ver: 1, iss: 'svc', aud: 'svc-api' });

      const old = await me(`Bearer ${token}`);
      expect(old.status).to.equal(401);
      expect(old.headers.get('www-authenticate')).to.match(/error="invalid_token"/);
      expect((await changePassword(token, { currentPassword: 'second password', newPassword: 'third password' })).status).to.equal(401);
      expect((await me(`Bearer ${fresh}`)).status).to.equal(200);

      expect((await json('/auth/login', { email: address, password: 'first password' })).status).to.equal(401);
      const login = await json('/auth/login', { email: address, password: 'second password' });
      expect(login.status).to.equal(200);
      expect((await me(`Bearer ${login.body.token as string}`)).status).to.equal(200);
      // The log has it too: the users projection keeps the version the change moved to.
      const users = await projectionCollection(platform.runtime.mongo.db, usersProjection.collection);
      await eventually('the projection at version 1', async () =>
        (await users.findOne({ email: address }))?.tokenVersion === 1 ? true : undefined,
      );
    });

    it('POST /auth/password: 401 without a token, 400 for a bad body, 403 for a wrong current password, then 429 like login', async () => {
      const { token } = await signup();
      expect((await json('/auth/password', { currentPassword: 'first password', newPassword: 'second password' })).status).to.equal(401);
      expect((await changePassword(token, { currentPassword: 'first password', newPassword: 'short' })).status).to.equal(400);
      expect((await changePassword(token, { currentPassword: 'first password', newPassword: 'first password' })).status).to.equal(400);
      for (let i = 0; i < 3; i++) {
        const wrong = await changePassword(token, { currentPassword: 'not my password', newPassword: 'second password' });
        expect(wrong.status).to.equal(403);
      }
      const limited = await changePassword(token, { currentPassword: 'first password', newPassword: 'second password' });
      expect(limited.status).to.equal(429);
      expect(limited.body.code).to.equal('RATE_LIMITED');
      expect(Number(limited.headers.get('retry-after'))).to.be.greaterThan(0);
      expect((await me(`Bearer ${token}`)).status).to.equal(200);
    });
  });

  describe('welcome e-mail and replay', () => {
    it('sends one welcome e-mail to the new user with their name, in HTML and text', async function () {
      if (!stack.MAILPIT_URL) this.skip();
      const address = email();
      await json('/auth/signup', { email: address, password: 'password mail', name: 'Grace <Hopper>' });
      const mails = await eventually('the welcome e-mail', async () => {
        const m = await mailTo(stack.MAILPIT_URL, address);
        return m.length > 0 ? m : undefined;
      });
      expect(mails).to.have.length(1);
      const [mail] = mails;
      expect(mail!.To.map((t) => t.Address)).to.deep.equal([address]);
      expect(mail!.Subject).to.equal('Welcome to svc, Grace <Hopper>');
      expect(mail!.Text).to.include('Hello Grace <Hopper>');
      expect(mail!.HTML).to.include('Hello Grace &lt;Hopper&gt;');
    });

    it('rebuilds the users projection identically by replay and sends no e-mail again', async function () {
      this.timeout(120_000);
      if (!stack.MAILPIT_URL) this.skip();
      const rt = platform.runtime;
      const address = email();
      await json('/auth/signup', { email: address, password: 'password replay', name: 'Replay' });
      await eventually('its welcome e-mail', async () => ((await mailTo(stack.MAILPIT_URL, address)).length === 1 ? true : undefined));
      const users = await projectionCollection(rt.mongo.db, usersProjection.collection);
      // The live consumer has caught up when the newest user carries its position from the log.
      const before = await eventually('the users projection', async () => {
        const docs = await users.find().sort({ _id: 1 }).toArray();
        return docs.some((d) => d.email === address) ? docs : undefined;
      });
      const result = await replayWith(rt, usersProjection as never);
      expect(result.documents).to.equal(before.length);
      const after = await (await projectionCollection(rt.mongo.db, usersProjection.collection)).find().sort({ _id: 1 }).toArray();
      expect(after).to.deep.equal(before);

      // A mailer that reads the whole topic again (a new consumer group) sends nothing new.
      const { ConsumerRunner } = await import('../../events/consumer.ts');
      const { Effects } = await import('../../events/effects.ts');
      const { smtpMailer } = await import('../../services/mailer/transport.ts');
      const { mailHandler } = await import('../../services/mailer/mail.consumer.ts');
      const { owedMail } = await import('../../services/mailer/owed-mail.ts');
      const mailer = smtpMailer(stack.SMTP_URL, 'svc <no-reply@svc.local>');
      let seen = 0;
      const effects = new Effects(rt.mongo.db);
      const settings = {
        keyEncryptionKey: rt.config.secrets.keyEncryptionKey,
        reactivateUrl: rt.config.urls.reactivate,
        pricingUrl: rt.config.urls.pricing,
        consoleUrl: rt.config.publicConsoleUrl,
      };
      const inner = mailHandler(effects, mailer, (e) => owedMail(e, settings), rt.log);
      const again = new ConsumerRunner({
        kafka: rt.kafka,
        codec: rt.codec,
        publisher: rt.publisher,
        log: rt.log,
        groupId: `mailer-again-${randomUUID()}`,
        topics: [rt.catalog.topicOf('account.registered')],
        handler: {
          handle: async (events, context) => {
            await inner.handle(events, context);
            seen += events.length;
          },
        },
      });
      await again.start();
      try {
        const offsets = await rt.admin.fetchTopicOffsets(rt.catalog.topicOf('account.registered'));
        const total = offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
        await eventually('the whole topic re-read', async () => (seen >= total ? true : undefined), 60_000);
      } finally {
        await again.stop();
        mailer.close();
      }
      expect(await mailTo(stack.MAILPIT_URL, address)).to.have.length(1);
    });
  });
});
