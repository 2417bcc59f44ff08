import { consumeOrLimit } from './rate-limited.ts';
import type { AttemptLimiter, SharedLimits } from './shared-limits.ts';

/**
 * Sign-ups per client address bucket (ipLimitKey) per hour, and for the whole service per minute.
 * Each sign-up costs a bcrypt hash and a welcome e-mail to an address the caller chose; the global
 * limit holds when the sign-ups come from many addresses. Shared by every replica and kept across
 * restarts, like the login limits (shared-limits.ts).
 */
export class SignupLimiter {
  private readonly perIp: AttemptLimiter;
  private readonly global: AttemptLimiter;

  constructor(limits: SharedLimits, budget: { perIpPerHour: number; perMinute: number }) {
    this.perIp = limits.limiter('signup-ip', budget.perIpPerHour, 3600);
    this.global = limits.limiter('signup-all', budget.perMinute, 60);
  }

  /** Takes the address's point first, so a client already over its own limit spends nobody else's. */
  async admit(ipKey: string): Promise<void> {
    await consumeOrLimit(this.perIp, ipKey, 'too many sign-ups from this address; retry later');
    await consumeOrLimit(this.global, 'all', 'too many sign-ups right now; retry later');
  }
}
