import { RateLimiterMemory } from 'rate-limiter-flexible';
import { consumeOrLimit } from './rate-limited.ts';

/**
 * Sign-ups per client address bucket (ipLimitKey) per hour, and for the whole service per minute.
 * Each sign-up costs a bcrypt hash and a welcome e-mail to an address the caller chose; the global
 * limit holds when the sign-ups come from many addresses. In-process memory, like the login limits.
 */
export class SignupLimiter {
  private readonly perIp: RateLimiterMemory;
  private readonly global: RateLimiterMemory;

  constructor(limits: { perIpPerHour: number; perMinute: number }) {
    this.perIp = new RateLimiterMemory({ keyPrefix: 'signup-ip', points: limits.perIpPerHour, duration: 3600 });
    this.global = new RateLimiterMemory({ keyPrefix: 'signup-all', points: limits.perMinute, duration: 60 });
  }

  /** Takes the address's point first, so a client already over its own limit spends nobody else's. */
  async admit(ipKey: string): Promise<void> {
    await consumeOrLimit(this.perIp, ipKey, 'too many sign-ups from this address; retry later');
    await consumeOrLimit(this.global, 'all', 'too many sign-ups right now; retry later');
  }
}
