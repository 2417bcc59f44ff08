import { HttpError } from '../platform/http/errors.ts';
import { HashPool, HashQueueFull, type JobInput } from './password-pool.ts';

/**
 * Password hashes, computed on worker threads (HashPool). A login for an unknown e-mail still
 * compares against a dummy hash of the same cost, so both failures take the same time and an
 * attacker cannot probe for accounts.
 */
export class Passwords {
  private readonly cost: number;
  private readonly pool: HashPool;
  private dummy: Promise<string> | undefined;

  constructor(cost: number, threads: { threads: number; queue: number } = { threads: 2, queue: 50 }) {
    this.cost = cost;
    this.pool = new HashPool(threads);
  }

  async hash(password: string): Promise<string> {
    return String(await this.run({ op: 'hash', password, cost: this.cost }));
  }

  async verify(password: string, hash: string | undefined): Promise<boolean> {
    const matches = (await this.run({ op: 'compare', password, hash: hash ?? (await this.dummyHash()) })) === true;
    return hash !== undefined && matches;
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  private dummyHash(): Promise<string> {
    // A refused attempt (queue full) must not stay cached as the dummy.
    this.dummy ??= this.hash('dummy password for timing').catch((err: unknown) => {
      this.dummy = undefined;
      throw err;
    });
    return this.dummy;
  }

  private async run(job: JobInput): Promise<string | boolean> {
    try {
      return await this.pool.run(job);
    } catch (err) {
      if (err instanceof HashQueueFull) {
        throw new HttpError(503, 'UNAVAILABLE', 'too busy to check passwords right now; retry shortly', {
          headers: { 'Retry-After': '1' },
        });
      }
      throw err;
    }
  }
}
