import { expect } from 'chai';
import type { ProjectionCache } from '../../../events/projection-cache.ts';
import type { KeyCache } from '../../../services/keys/key-cache.ts';
import { generateApiKey, hashKey } from '../../../services/keys/key-format.ts';
import type { UsageDocument } from '../../../services/keys/usage.ts';
import { LocalValidator, type LimitDecision, type RateLimiting } from '../../../services/keys/validator.ts';
import { activeKeyRecord } from '../../support/key-records.ts';

const ALLOW: LimitDecision = { allowed: true, limit: 600, remaining: 10, resetAt: 1_700_000_040_000 };

/** In memory: what is "held" answers synchronously, the rest through the async forms; every consumption is counted. */
function fixture(held: { ip: boolean; key: boolean; record: boolean; usage: boolean }) {
  const apiKey = generateApiKey();
  const keyHash = hashKey(apiKey);
  const record = activeKeyRecord({ keyHash, last4: apiKey.slice(-4) });
  const calls = { ipHeld: 0, consumeIp: 0, keyHeld: 0, consumeKey: 0, keysGet: 0, usageGet: 0 };
  const limits: RateLimiting = {
    // A held form that answers undefined has consumed nothing: only its answers are counted.
    ipHeld: () => (held.ip ? (calls.ipHeld++, ALLOW) : undefined),
    consumeIp: async () => (calls.consumeIp++, ALLOW),
    keyHeld: () => (held.key ? (calls.keyHeld++, ALLOW) : undefined),
    consumeKey: async () => (calls.consumeKey++, ALLOW),
  };
  const keys = {
    peek: (h: string) => (held.record && h === keyHash ? record : undefined),
    get: async (h: string) => (calls.keysGet++, h === keyHash ? record : null),
  } as unknown as KeyCache;
  const usage = {
    peekView: () => (held.usage ? ({ counts: { queries: 5, filesIndexed: 0, screenshotsAnalyzed: 0 } } as UsageDocument) : undefined),
    get: async () => (calls.usageGet++, { counts: { queries: 5, filesIndexed: 0, screenshotsAnalyzed: 0 } } as UsageDocument),
  } as unknown as ProjectionCache<UsageDocument>;
  const noted: string[] = [];
  const validator = new LocalValidator(
    limits,
    keys,
    usage,
    { reserve: async () => null, release: async () => undefined },
    { note: (_keyHash, subscriptionId, outcome) => noted.push(`${subscriptionId}:${outcome}`) },
  );
  return { validator, apiKey, calls, noted, limits, usage };
}

describe('LocalValidator.check: synchronous when everything is held', () => {
  it('answers without a promise when the limits, the key and its usage are all in memory', () => {
    const { validator, apiKey, calls } = fixture({ ip: true, key: true, record: true, usage: true });
    const outcome = validator.check(apiKey, { ip: '10.0.0.1' });
    expect(outcome).not.to.be.instanceOf(Promise);
    expect((outcome as Exclude<typeof outcome, Promise<unknown>>).result).to.deep.include({ valid: true });
    expect(calls).to.deep.equal({ ipHeld: 1, consumeIp: 0, keyHeld: 1, consumeKey: 0, keysGet: 0, usageGet: 0 });
  });

  for (const missing of ['ip', 'key', 'record', 'usage'] as const) {
    it(`awaits from the step whose ${missing} is not held, and consumes each limit exactly once`, async () => {
      const held = { ip: true, key: true, record: true, usage: true, [missing]: false };
      const { validator, apiKey, calls } = fixture(held);
      const outcome = validator.check(apiKey, { ip: '10.0.0.1' });
      expect(outcome).to.be.instanceOf(Promise);
      expect((await outcome).result).to.deep.include({ valid: true });
      expect(calls.ipHeld + calls.consumeIp, 'IP limit consumed').to.equal(1);
      expect(calls.keyHeld + calls.consumeKey, 'key limit consumed').to.equal(1);
      expect(calls.consumeIp).to.equal(missing === 'ip' ? 1 : 0);
      expect(calls.consumeKey).to.equal(missing === 'key' ? 1 : 0);
      expect(calls.keysGet).to.equal(missing === 'record' ? 1 : 0);
      expect(calls.usageGet).to.equal(missing === 'usage' ? 1 : 0);
    });
  }

  it("reads the key's usage while its rate-limit block is claimed, not after (issue 37)", async () => {
    const { validator, apiKey, calls, limits, usage } = fixture({ ip: true, key: false, record: true, usage: false });
    let claimed!: (d: LimitDecision) => void;
    limits.consumeKey = () => (calls.consumeKey++, new Promise<LimitDecision>((resolve) => (claimed = resolve)));
    let loads = 0;
    let load: Promise<UsageDocument> | undefined;
    // As the cache does: concurrent reads of one id share one load.
    usage.get = () => {
      calls.usageGet++;
      load ??= (loads++, Promise.resolve({ counts: { queries: 5, filesIndexed: 0, screenshotsAnalyzed: 0 } } as UsageDocument));
      return load;
    };
    const outcome = validator.check(apiKey, { ip: '10.0.0.1' });
    expect(calls.consumeKey).to.equal(1);
    expect(loads, 'the usage read is out before the claim answers').to.equal(1);
    claimed(ALLOW);
    expect((await outcome).result).to.deep.include({ valid: true });
    expect(loads, 'one read').to.equal(1);
  });

  it('reads the usage of the month the request falls in, also once the month turns (the ids are kept per month)', () => {
    const { validator, apiKey, usage } = fixture({ ip: true, key: true, record: true, usage: true });
    const asked: string[] = [];
    const held = usage.peekView.bind(usage);
    usage.peekView = (id: string) => (asked.push(id), held(id));
    const realNow = Date.now;
    try {
      Date.now = () => Date.parse('2026-11-30T23:59:59.900Z');
      validator.check(apiKey, { ip: '10.0.0.1' });
      validator.check(apiKey, { ip: '10.0.0.1' });
      Date.now = () => Date.parse('2026-12-01T00:00:00.100Z');
      validator.check(apiKey, { ip: '10.0.0.1' });
    } finally {
      Date.now = realNow;
    }
    const keyHash = hashKey(apiKey);
    expect(asked).to.deep.equal([`${keyHash}:2026-11`, `${keyHash}:2026-11`, `${keyHash}:2026-12`]);
  });

  it('refuses a malformed key synchronously, after counting the IP', () => {
    const { validator, calls } = fixture({ ip: true, key: true, record: true, usage: true });
    const outcome = validator.check('svc_short', { ip: '10.0.0.1' });
    expect(outcome).not.to.be.instanceOf(Promise);
    expect((outcome as Exclude<typeof outcome, Promise<unknown>>).result).to.deep.include({ valid: false, code: 'MALFORMED' });
    expect(calls.ipHeld).to.equal(1);
    expect(calls.keyHeld).to.equal(0);
  });

  it('notes each verification of a known key by outcome, on the synchronous path too, and none of an unknown key', async () => {
    const sync = fixture({ ip: true, key: true, record: true, usage: true });
    expect(sync.validator.check(sync.apiKey, { ip: '10.0.0.1' })).not.to.be.instanceOf(Promise);
    expect(sync.noted).to.deep.equal(['sub-1:VALID']);
    const async = fixture({ ip: true, key: false, record: false, usage: false });
    await async.validator.check(async.apiKey, { ip: '10.0.0.1', metric: 'screenshotsAnalyzed', amount: 1 });
    await async.validator.check(async.apiKey, { ip: '10.0.0.1' });
    expect(async.noted).to.deep.equal(['sub-1:VALID', 'sub-1:VALID']);
    await async.validator.check(generateApiKey(), { ip: '10.0.0.1' });
    expect(async.noted, 'an unknown key is nobody’s to count').to.have.length(2);
  });
});
