import { createHash } from 'node:crypto';
import { unavailable } from '../platform/http/errors.ts';
import { consumeOrLimit } from './rate-limited.ts';
import type { AttemptLimiter, SharedLimits } from './shared-limits.ts';

const MESSAGE = 'too many login attempts; retry later';

/**
 * Brute-force protection for login: every attempt counts against the client's address bucket
 * (ipLimitKey) and against the e-mail; a success gives the e-mail its attempts back.
 *
 * The e-mail's attempt is taken before the password is checked, not counted after a failure:
 * counted after, every one of many concurrent guesses passes the check while the hashes run, and
 * 30 parallel guesses all reached bcrypt past a limit of 10.
 *
 * The counts are shared by every replica and survive a restart (shared-limits.ts): N replicas give
 * one guessing budget, not N. The e-mail is kept only as a hash in the counts.
 */
export class LoginLimiter {
  private readonly perIp: AttemptLimiter;
  private readonly perEmail: AttemptLimiter;

  constructor(limits: SharedLimits, budget: { perIpPerMinute: number; failuresPerEmailPer15Min: number }) {
    this.perIp = limits.limiter('login-ip', budget.perIpPerMinute, 60);
    this.perEmail = limits.limiter('login-email', budget.failuresPerEmailPer15Min, 15 * 60);
  }

  /** Reserves one attempt for the address and the e-mail, or throws a 429 (a 503 when it cannot count). */
  async attempt(ipKey: string, email: string): Promise<void> {
    await consumeOrLimit(this.perIp, ipKey, MESSAGE);
    await consumeOrLimit(this.perEmail, emailKey(email), MESSAGE);
  }

  /**
   * Reserves one attempt for the e-mail alone (429 past the budget): a sign-up retried with an e-mail that
   * has an account checks its password, and those checks share the login's budget for that e-mail. The
   * client address is limited by the sign-up's own limits.
   */
  async attemptFor(email: string): Promise<void> {
    await consumeOrLimit(this.perEmail, emailKey(email), MESSAGE);
  }

  async succeeded(email: string): Promise<void> {
    try {
      await this.perEmail.delete(emailKey(email));
    } catch {
      throw unavailable();
    }
  }
}

const emailKey = (email: string): string => createHash('sha256').update(email).digest('base64url');
