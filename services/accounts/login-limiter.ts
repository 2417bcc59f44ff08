import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { HttpError } from '../platform/http/errors.ts';

/**
 * Brute-force protection for login: every attempt counts against the client IP; failures count
 * against the e-mail and a success clears them.
 */
export class LoginLimiter {
  private readonly perIp: RateLimiterMemory;
  private readonly perEmail: RateLimiterMemory;

  constructor(limits: { perIpPerMinute: number; failuresPerEmailPer15Min: number }) {
    this.perIp = new RateLimiterMemory({ keyPrefix: 'login-ip', points: limits.perIpPerMinute, duration: 60 });
    this.perEmail = new RateLimiterMemory({ keyPrefix: 'login-email', points: limits.failuresPerEmailPer15Min, duration: 15 * 60 });
  }

  async attempt(ip: string, email: string): Promise<void> {
    await this.guard(() => this.perIp.consume(ip));
    const state = await this.perEmail.get(email);
    if (state && state.remainingPoints <= 0) throw tooMany(state.msBeforeNext);
  }

  async failed(email: string): Promise<void> {
    await this.perEmail.consume(email).catch(() => undefined);
  }

  async succeeded(email: string): Promise<void> {
    await this.perEmail.delete(email);
  }

  private async guard(consume: () => Promise<unknown>): Promise<void> {
    try {
      await consume();
    } catch (err) {
      if (err instanceof RateLimiterRes) throw tooMany(err.msBeforeNext);
      throw err;
    }
  }
}

function tooMany(msBeforeNext: number): HttpError {
  return new HttpError(429, 'RATE_LIMITED', 'too many login attempts; retry later', {
    headers: { 'Retry-After': String(Math.max(1, Math.ceil(msBeforeNext / 1000))) },
  });
}
