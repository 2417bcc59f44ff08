import { expect } from 'chai';
import { performance } from 'node:perf_hooks';
import { Passwords } from '../../../services/accounts/password.ts';
import { HttpError } from '../../../services/platform/http/errors.ts';

describe('password hashing (unit)', function () {
  this.timeout(30_000);

  it('hashes and verifies, and an unknown account never verifies', async () => {
    const passwords = new Passwords(10, { threads: 2, queue: 10 });
    try {
      const hash = await passwords.hash('correct horse');
      expect(hash).to.match(/^\$2[aby]\$10\$/);
      expect(await passwords.verify('correct horse', hash)).to.equal(true);
      expect(await passwords.verify('wrong horse', hash)).to.equal(false);
      expect(await passwords.verify('correct horse', undefined)).to.equal(false);
    } finally {
      await passwords.close();
    }
  });

  // Why utilization and not latency: the claim is that bcrypt does not run on the thread that serves
  // /validate. While it runs on that thread, the main loop is busy nearly all the time; on workers
  // it only passes messages. No absolute timing is asserted.
  it('runs bcrypt off the main thread: the event loop stays mostly idle while eight hashes run', async () => {
    const passwords = new Passwords(11, { threads: 2, queue: 10 });
    try {
      await passwords.hash('warm the workers up');
      const before = performance.eventLoopUtilization();
      await Promise.all(Array.from({ length: 8 }, (_, i) => passwords.hash(`password ${i}`)));
      const during = performance.eventLoopUtilization(before);
      expect(during.utilization).to.be.below(0.5);
    } finally {
      await passwords.close();
    }
  });

  it('answers 503 for work beyond the running hashes and the bounded queue, and takes work again after', async () => {
    const passwords = new Passwords(10, { threads: 1, queue: 2 });
    try {
      const outcomes = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => passwords.hash(`password ${i}`)));
      expect(outcomes.filter((o) => o.status === 'fulfilled')).to.have.length(3);
      const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected').map((o) => o.reason as unknown);
      expect(refused).to.have.length(3);
      for (const err of refused) {
        expect(err).to.be.instanceOf(HttpError);
        expect(err).to.include({ status: 503 });
        expect((err as HttpError).headers['Retry-After']).to.match(/^\d+$/);
      }
      expect(await passwords.hash('after the burst')).to.match(/^\$2/);
    } finally {
      await passwords.close();
    }
  });
});
