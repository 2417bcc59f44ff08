import { expect } from 'chai';
import { assessKey } from '../../../services/keys/assess.ts';
import type { KeyRecord } from '../../../services/keys/keys.projection.ts';
import { noUsage } from '../../../services/keys/usage.ts';

const record = (over: Partial<KeyRecord> = {}): KeyRecord => ({
  subscriptionId: 'sub-1',
  keyHash: 'h'.repeat(64),
  last4: 'abcd',
  tier: 'free',
  status: 'active',
  subscriptionStatus: null,
  paidTier: null,
  customerId: 'cus-1',
  email: 'a@example.test',
  createdAt: new Date(0),
  endsAt: null,
  ...over,
});
const queries = (n: number) => ({ ...noUsage(), queries: n });

describe('key assessment (unit)', () => {
  it('a free key within its quota is valid, with its quotas and no features', () => {
    const result = assessKey(record(), queries(40), { metric: 'queries', amount: 1 });
    expect(result.valid).to.equal(true);
    if (!result.valid) return;
    expect(result.usage.queries).to.deep.equal({ used: 40, limit: 100, remaining: 60 });
    expect(result.features.visionRAG).to.equal(false);
  });

  it('refuses the request that would pass the quota, not the one that reaches it', () => {
    expect(assessKey(record(), queries(99), { metric: 'queries', amount: 1 }).valid).to.equal(true);
    expect(assessKey(record(), queries(100), { metric: 'queries', amount: 1 })).to.deep.include({ valid: false, code: 'USAGE_EXCEEDED' });
    expect(assessKey(record(), queries(100), { metric: 'queries', amount: 0 }).valid, 'reading usage is not using it').to.equal(true);
    expect(assessKey(record(), noUsage(), { metric: 'screenshotsAnalyzed', amount: 1 })).to.deep.include({ code: 'USAGE_EXCEEDED' });
  });

  it('pro and team are unlimited (-1) with every feature', () => {
    for (const tier of ['pro', 'team'] as const) {
      const result = assessKey(record({ tier }), queries(1_000_000), { metric: 'queries', amount: 1 });
      expect(result.valid).to.equal(true);
      if (result.valid) {
        expect(result.usage.queries).to.deep.equal({ used: 1_000_000, limit: -1, remaining: -1 });
        expect(Object.values(result.features)).to.deep.equal([true, true, true, true]);
      }
    }
  });

  it('a revoked key is DISABLED; a record without a key is NOT_FOUND', () => {
    expect(assessKey(record({ status: 'revoked' }), noUsage(), { metric: 'queries', amount: 1 })).to.deep.include({ code: 'DISABLED' });
    expect(assessKey(record({ keyHash: null, status: 'none' }), noUsage(), { metric: 'queries', amount: 1 })).to.deep.include({
      code: 'NOT_FOUND',
    });
  });

  it('a key whose subscription ended stays valid at the free tier', () => {
    const result = assessKey(record({ tier: 'free', subscriptionStatus: 'ended', paidTier: 'pro' }), noUsage(), {
      metric: 'queries',
      amount: 1,
    });
    expect(result).to.deep.include({ valid: true });
  });
});
