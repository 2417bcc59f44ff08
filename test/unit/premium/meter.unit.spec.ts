import { expect } from 'chai';
import { meter } from '../../../services/premium/meter.ts';
import type { Caller } from '../../../services/premium/caller.ts';
import { quotaReport } from '../../../services/keys/assess.ts';
import type { QuotaHold } from '../../../services/keys/gate.ts';
import { HttpError } from '../../../services/platform/http/errors.ts';

const PRICING = 'https://svc.example/pricing';

/** A caller whose quota the gate saw with room left, and whose holds this test decides. */
function callerHolding(hold: QuotaHold | null): { caller: Caller; released: () => number } {
  let released = 0;
  const held: QuotaHold | null = hold && { release: async () => void (released += 1) };
  return {
    caller: {
      customerId: 'cus',
      keyHash: 'k'.repeat(64),
      usage: quotaReport('free', { queries: 99, filesIndexed: 0, screenshotsAnalyzed: 0 }),
      reserve: async () => held,
    },
    released: () => released,
  };
}

describe('meter: quota held before the use is recorded', () => {
  it('refuses with 403 USAGE_EXCEEDED when the hold finds no room, though the gate saw some, and records nothing', async () => {
    const published: unknown[] = [];
    const { caller } = callerHolding(null);
    const err = await meter(
      { config: { urls: { pricing: PRICING } }, usagePublisher: { publish: async (e) => void published.push(e) } },
      caller,
      'queries',
      1,
      'c',
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(HttpError);
    expect(err).to.deep.include({ status: 403, code: 'USAGE_EXCEEDED', details: { upgrade: PRICING } });
    expect(published).to.deep.equal([]);
  });

  it('gives the hold back when the use cannot be recorded, and keeps it when it is', async () => {
    const failing = callerHolding({ release: async () => undefined });
    const down = { publish: async () => Promise.reject(new Error('broker down')) };
    await meter({ config: { urls: { pricing: PRICING } }, usagePublisher: down }, failing.caller, 'queries', 1, 'c').catch(() => undefined);
    expect(failing.released()).to.equal(1);
    const ok = callerHolding({ release: async () => undefined });
    await meter(
      { config: { urls: { pricing: PRICING } }, usagePublisher: { publish: async () => undefined } },
      ok.caller,
      'queries',
      1,
      'c',
    );
    expect(ok.released()).to.equal(0);
  });
});
