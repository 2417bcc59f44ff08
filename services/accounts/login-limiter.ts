import { RateLimiterMemory } from 'rate-limiter-flexible';
import { consumeOrLimit } from './rate-limited.ts';

const MESSAGE = 'too many login attempts; retry later';

/**
 * Brute-force protection for login: every attempt counts against the client's address bucket
 * (ipLimitKey) and against the e-mail; a success gives the e-mail its attempts back.
 *
 * The e-mail's attempt is taken before the password is checked, not counted after a failure:
 * counted after, every one of many concurrent guesses passes the check while the hashes run, and
 * 30 parallel guesses all reached bcrypt past a limit of 10.
 */
export class LoginLimiter {
  private readonly perIp: RateLimiterMemory;
  private readonly perEmail: RateLimiterMemory;

  constructor(limits: { perIpPerMinute: number; failuresPerEmailPer15Min: number }) {
    this.perIp = new RateLimiterMemory({ keyPrefix: 'login-ip', points: limits.perIpPerMinute, duration: 60 });
    this.perEmail = new RateLimiterMemory({ keyPrefix: 'login-email', points: limits.failuresPerEmailPer15Min, duration: 15 * 60 });
  }

  /** Reserves one attempt for the address and the e-mail, or throws a 429. */
  async attempt(ipKey: string, email: string): Promise<void> {
    await consumeOrLimit(this.perIp, ipKey, MESSAGE);
    await consumeOrLimit(this.perEmail, email, MESSAGE);
  }

  async succeeded(email: string): Promise<void> {
    await this.perEmail.delete(email);
  }
}
