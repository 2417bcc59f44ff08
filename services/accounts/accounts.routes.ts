import type { Express } from 'express';
import type { Db } from 'mongodb';
import { projectionCollection } from '../../events/collections.ts';
import { applyEvents } from '../../events/projection.ts';
import type { Config } from '../platform/config.ts';
import { clientIpKey } from '../platform/http/client-ip.ts';
import { HttpError, badRequest, conflict, unauthorized, unavailable } from '../platform/http/errors.ts';
import { noStore } from '../platform/http/no-store.ts';
import { tokenVersionOf, type AccountRecord, type AccountStore } from './account-store.ts';
import type { MeAnswer, SessionAnswer } from './accounts.api.ts';
import { firstProblem, loginInput, passwordChangeInput, signupInput } from './credentials-input.ts';
import { issueVerification } from './email-verification.ts';
import type { LoginLimiter } from './login-limiter.ts';
import type { LoginRecords } from './login-records.ts';
import type { Passwords } from './password.ts';
import type { SignupLimiter } from './signup-limiter.ts';
import { authenticate } from './session.ts';
import { publicUser, sessionFor } from './session-answer.ts';
import { issueToken, type TokenSettings } from './tokens.ts';
import { getUser, usersProjection, type User } from './users.projection.ts';

export interface AccountDeps {
  config: Config;
  db: Db;
  store: AccountStore;
  passwords: Passwords;
  limiter: LoginLimiter;
  signups: SignupLimiter;
  /** Each login as an event, for the audit log. */
  logins: Pick<LoginRecords, 'record'>;
}

export function mountAccountRoutes(app: Express, deps: AccountDeps): void {
  const { config, db, store, passwords, limiter, signups, logins } = deps;
  const tokens: TokenSettings = { secret: config.secrets.jwtSecret, ...config.jwt };

  /**
   * A sign-up of an e-mail that has an account. A retry of a sign-up whose answer was lost completes it,
   * with the same e-mail and password: one whose publish failed (503) or whose process died before it
   * published (pending, abandoned), one still in flight (503 with Retry-After: retry), and one recorded
   * whose answer never reached the client (its replica died after recording it, or the connection was
   * cut), within SIGNUP_RETRY_MS of it. Anything else is a conflict. The password checks count in the
   * login's budget for the e-mail, so the sign-up form is no second way to guess it.
   */
  const answerAgain = async (existing: AccountRecord, password: string): Promise<SessionAnswer> => {
    const pending = existing.outbox?.pending === true;
    if (!pending && Date.now() - existing.createdAt.getTime() > SIGNUP_RETRY_MS)
      throw conflict('an account with this email already exists');
    await limiter.attemptFor(existing.email);
    if (!(await passwords.verify(password, existing.passwordHash))) throw conflict('an account with this email already exists');
    await limiter.succeeded(existing.email);
    if (!pending) return sessionFor(db, tokens, existing);
    if (!abandoned(existing, config))
      throw new HttpError(503, 'UNAVAILABLE', 'this sign-up is still being recorded; retry', { headers: { 'Retry-After': '1' } });
    if (!(await store.retryPending(existing))) throw unavailable();
    const user = {
      id: existing.userId,
      email: existing.email,
      name: existing.name,
      tier: 'free' as const,
      tokenVersion: tokenVersionOf(existing),
    };
    return { token: issueToken(tokens, user), user: publicUser(user) };
  };

  app.post('/auth/signup', noStore, async (req, res) => {
    const parsed = signupInput.safeParse(req.body);
    if (!parsed.success) throw badRequest(firstProblem(parsed.error));
    const { email, password, name } = parsed.data;
    await signups.admit(clientIpKey(req));
    const existing = await store.findByEmail(email);
    if (existing) {
      res.status(201).json(await answerAgain(existing, password));
      return;
    }
    const passwordHash = await passwords.hash(password);
    const verification = issueVerification(config.secrets.keyEncryptionKey, email);
    const result = await store.register({ email, name, passwordHash, emailVerified: false, verification }, req.id);
    if (result.status === 'taken') {
      // Another sign-up of this e-mail was recorded between the look-up and ours: the same rules.
      const taken = await store.findByEmail(email);
      if (!taken) throw conflict('an account with this email already exists');
      res.status(201).json(await answerAgain(taken, password));
      return;
    }
    if (result.status === 'unavailable') throw unavailable();
    if (result.position) {
      // Read-your-writes: apply our own event at its real log position now; the projection
      // consumer will find it already applied.
      await applyEvents(await projectionCollection(db, usersProjection.collection), usersProjection, [
        { ...result.event, position: result.position },
      ]);
    }
    const user = { id: result.event.data.userId, email, name, tier: 'free' as const, tokenVersion: 0 };
    res.status(201).json({ token: issueToken(tokens, user), user: publicUser(user) } satisfies SessionAnswer);
  });

  app.post('/auth/login', noStore, async (req, res) => {
    const parsed = loginInput.safeParse(req.body);
    if (!parsed.success) throw badRequest(firstProblem(parsed.error));
    const { email, password } = parsed.data;
    await limiter.attempt(clientIpKey(req), email);
    const account = await store.findByEmail(email);
    if (!(await passwords.verify(password, account?.passwordHash)) || !account) throw unauthorized('invalid email or password');
    await limiter.succeeded(email);
    // Recorded before the token is handed out: a session the audit log does not know is never issued.
    await logins.record(account.userId, req.id);
    res.json(await sessionFor(db, tokens, account));
  });

  // Counted against the same limits as login (per address, and per e-mail until a success):
  // a stolen token must not become a second, unlimited way to guess the password.
  app.post('/auth/password', noStore, async (req, res) => {
    const { account } = await authenticate(req, tokens, store);
    const parsed = passwordChangeInput.safeParse(req.body);
    if (!parsed.success) throw badRequest(firstProblem(parsed.error));
    await limiter.attempt(clientIpKey(req), account.email);
    // 403, not 401: the session is fine, and a client that drops its token on 401 should not here.
    if (!(await passwords.verify(parsed.data.currentPassword, account.passwordHash)))
      throw new HttpError(403, 'FORBIDDEN', 'current password is incorrect');
    const passwordHash = await passwords.hash(parsed.data.newPassword);
    const result = await store.changePassword(account, passwordHash, req.id);
    if (result.status === 'conflict')
      throw conflict('the account changed meanwhile (another password change, or its sign-up is still being recorded); retry');
    if (result.status === 'changed' && result.position) {
      await applyEvents(await projectionCollection(db, usersProjection.collection), usersProjection, [
        { ...result.event, position: result.position },
      ]);
    }
    await limiter.succeeded(account.email);
    const projected = await getUser(db, account.userId);
    const user = {
      id: account.userId,
      email: account.email,
      name: account.name,
      tier: projected?.tier ?? 'free',
      tokenVersion: result.tokenVersion,
    };
    res.json({ token: issueToken(tokens, user), user: publicUser(user) } satisfies SessionAnswer);
  });

  // The tier comes from the users projection, never from the token: a token issued before an
  // upgrade (or a downgrade) still carries the tier of its day.
  app.get('/auth/me', noStore, async (req, res) => {
    const { account } = await authenticate(req, tokens, store);
    // The projection can trail a registration the outbox relay published late; the account
    // store knows every account the moment it exists.
    const user = (await getUser(db, account.userId)) ?? accountAsUser(account);
    // From the account store, where the verification is written with its event.
    const emailVerified = account.emailVerifiedAt !== undefined && account.emailVerifiedAt !== null;
    res.json({ ...publicUser(user), created_at: user.createdAt.toISOString(), emailVerified } satisfies MeAnswer);
  });
}

/**
 * A pending claim nobody is still publishing: a publish failed on it, or it is older than any
 * sign-up request can run (the publish timeout plus hashing and the insert).
 */
/**
 * How long after a sign-up was recorded a retry with the same e-mail and password still gets its answer:
 * longer than a client's retries (test/faults/traffic.ts gives up after 3 minutes), short enough that
 * the sign-up form does not become a login form for long.
 */
const SIGNUP_RETRY_MS = 5 * 60_000;

function abandoned(account: AccountRecord, config: Config): boolean {
  if ((account.outbox?.attempts ?? 0) > 0) return true;
  return Date.now() - account.createdAt.getTime() > config.kafka.publishTimeoutMs + 5000;
}

function accountAsUser(account: AccountRecord): User {
  return { id: account.userId, email: account.email, name: account.name, tier: 'free', createdAt: account.createdAt };
}
