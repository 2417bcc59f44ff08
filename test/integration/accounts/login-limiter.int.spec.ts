import { expect } from 'chai';
import { LoginLimiter } from '../../../services/accounts/login-limiter.ts';
import { HttpError } from '../../../services/platform/http/errors.ts';

describe('login limiter (unit)', () => {
  it("admits exactly the e-mail's limit of concurrent attempts, before any password is checked", async () => {
    const limiter = new LoginLimiter({ perIpPerMinute: 1000, failuresPerEmailPer15Min: 10 });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) => limiter.attempt(`198.51.100.${i}`, 'target@example.test')),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).to.have.length(10);
    for (const o of outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected')) {
      expect(o.reason).to.be.instanceOf(HttpError);
      expect(o.reason).to.include({ status: 429, code: 'RATE_LIMITED' });
      expect(Number((o.reason as HttpError).headers['Retry-After'])).to.be.greaterThan(0);
    }
  });

  it('gives the attempts back on success', async () => {
    const limiter = new LoginLimiter({ perIpPerMinute: 1000, failuresPerEmailPer15Min: 2 });
    await limiter.attempt('192.0.2.1', 'a@example.test');
    await limiter.attempt('192.0.2.1', 'a@example.test');
    await limiter.succeeded('a@example.test');
    await limiter.attempt('192.0.2.1', 'a@example.test');
    await limiter.attempt('192.0.2.1', 'a@example.test');
    try {
      await limiter.attempt('192.0.2.1', 'a@example.test');
      expect.fail('the third attempt should be limited');
    } catch (err) {
      expect(err).to.include({ status: 429 });
    }
  });
});
