import { expect } from 'chai';
import { invalid, quotaReport, type Assessment } from '../../../services/keys/assess.ts';
import { limitsOf, TIERS } from '../../../services/kernel/tiers.ts';
import { answerHead, answerOf, plainKeyBody, rateHeaders, readValidateInput } from '../../../services/keys/validate-answer.ts';

const rate = { allowed: true, limit: 600, remaining: 599, resetAt: 1_700_000_040_000 };

/** What the route wrote before its body was assembled from parts: res.json of this object. */
const asObject = (a: Extract<Assessment, { valid: true }>) =>
  JSON.stringify({
    valid: true,
    tier: a.identity.tier,
    customerId: a.identity.customerId,
    usage: { queries: a.usage.queries, filesIndexed: a.usage.filesIndexed },
    features: a.features,
  });

describe('POST /validate answers from precomputed parts', () => {
  it('writes a valid key byte for byte as serialising the answer object did, for every tier and awkward ids', () => {
    for (const tier of TIERS) {
      for (const customerId of ['cus_1', '', 'quote " back \\ slash', 'émoji 🔑 \u2028 \u0000', '</script>']) {
        for (const usage of [
          { queries: 0, filesIndexed: 0, screenshotsAnalyzed: 0 },
          { queries: 99, filesIndexed: 1234, screenshotsAnalyzed: 7 },
        ]) {
          const result: Extract<Assessment, { valid: true }> = {
            valid: true,
            identity: { keyHash: 'h', tier, customerId, subscriptionId: 's' },
            usage: quotaReport(tier, usage),
            features: { ...limitsOf(tier).features },
          };
          const answer = answerOf({ result, rate });
          expect(answer.status).to.equal(200);
          expect(answer.body, `${tier} ${customerId}`).to.equal(asObject(result));
          expect(JSON.parse(answer.body)).to.have.property('valid', true);
        }
      }
    }
  });

  it('writes refusals as {valid: false, error, code}, 429 only for a rate limit', () => {
    for (const code of ['NOT_FOUND', 'MALFORMED', 'EXPIRED', 'DISABLED', 'USAGE_EXCEEDED', 'RATE_LIMITED'] as const) {
      const result = invalid(code) as Extract<Assessment, { valid: false }>;
      const answer = answerOf({ result, rate: null });
      expect(answer.body).to.equal(JSON.stringify({ valid: false, error: result.error, code }));
      expect(answer.status).to.equal(code === 'RATE_LIMITED' ? 429 : 200);
    }
  });

  it('takes {"apiKey"} alone without the schema, and everything else through it with its messages', () => {
    expect(readValidateInput({ apiKey: 'svc_x' })).to.deep.equal({ ok: true, apiKey: 'svc_x', request: {} });
    expect(readValidateInput({ apiKey: 'svc_x', metric: 'filesIndexed', amount: 3 })).to.deep.equal({
      ok: true,
      apiKey: 'svc_x',
      request: { metric: 'filesIndexed', amount: 3 },
    });
    const refused = (body: unknown) => {
      const input = readValidateInput(body);
      if (input.ok) throw new Error(`taken: ${JSON.stringify(body)}`);
      expect(input.answer.status).to.equal(400);
      return JSON.parse(input.answer.body) as { valid: boolean; error: string };
    };
    expect(refused({})).to.deep.equal({ valid: false, error: 'apiKey is required' });
    expect(refused({ apiKey: '' })).to.deep.equal({ valid: false, error: 'apiKey is required' });
    expect(refused({ apiKey: 5 }).error).to.equal('apiKey is required');
    expect(refused([{ apiKey: 'svc_x' }]).valid).to.equal(false);
    expect(refused({ apiKey: 'svc_x', metric: 'nope' }).valid).to.equal(false);
    expect(refused({ apiKey: 'svc_x', amount: 0 }).valid).to.equal(false);
    const withProto = JSON.parse('{"__proto__":{"apiKey":"svc_y"},"apiKey":"svc_x"}') as unknown;
    expect(readValidateInput(withProto)).to.deep.include({ ok: true, apiKey: 'svc_x' });
  });

  it('reads the compact {"apiKey"} body from its bytes exactly as parsing it would, and passes every other body on', () => {
    /** What the lean route made of a body before the byte reading: JSON.parse, then readValidateInput. */
    const parsed = (text: string) => {
      try {
        return readValidateInput(JSON.parse(text) as unknown);
      } catch {
        return undefined;
      }
    };
    const taken = ['{"apiKey":"svc_abcdefghijklmnopqrstuvwxyz0123456"}', '{"apiKey":"x"}', '{"apiKey":" ~!#$%&\'()*+,-./:;<=>?@[]^_`{|}"}'];
    for (const text of taken) {
      const input = plainKeyBody(Buffer.from(text));
      expect(input, text).to.not.equal(undefined);
      expect(input, text).to.deep.equal(parsed(text));
    }
    const passedOn = [
      '{"apiKey":""}',
      '{"apiKey": "svc_x"}',
      ' {"apiKey":"svc_x"}',
      '{"apiKey":"svc_x"} ',
      '\ufeff{"apiKey":"svc_x"}',
      '{"apiKey":"svc_\\u0041"}',
      '{"apiKey":"svc_\\"x"}',
      '{"apiKey":"svc_x","metric":"queries"}',
      '{"apiKey":"svc_x"}{"apiKey":"svc_y"}',
      '{"apiKey":"sv"c_x"}',
      '{"apiKey":"svc_é"}',
      '{"apiKey":"svc_\tx"}',
      '{"apiKey":"svc_x"',
      '{"apiKey":"',
      '{"apiKey":""}}',
      '{"apikey":"svc_x"}',
      '["svc_x"]',
    ];
    for (const text of passedOn) expect(plainKeyBody(Buffer.from(text)), text).to.equal(undefined);
    // Random bodies around the usual one: whatever the byte reading takes, parsing took the same way.
    const alphabet = ['a', 'Z', '0', '"', '\\', '{', '}', ':', ',', ' ', 'é', '\u0001', '\u007f', 'u'];
    let state = 7;
    const next = () => (state = (state * 1_103_515_245 + 12_345) % 2 ** 31);
    for (let i = 0; i < 2000; i++) {
      let middle = '';
      const length = next() % 12;
      for (let j = 0; j < length; j++) middle += alphabet[next() % alphabet.length];
      const text = `{"apiKey":"${middle}"}`;
      const input = plainKeyBody(Buffer.from(text));
      if (input !== undefined) expect(input, text).to.deep.equal(parsed(text));
    }
  });

  it('writes a shared (frozen) assessment once: the same body and its byte length for every answer of it', () => {
    const result: Extract<Assessment, { valid: true }> = {
      valid: true,
      identity: { keyHash: 'h', tier: 'team', customerId: 'cus_é', subscriptionId: 's', memberUserId: 'u-1' },
      usage: quotaReport('team', { queries: 3, filesIndexed: 1, screenshotsAnalyzed: 0 }),
      features: { ...limitsOf('team').features },
    };
    const fresh = answerOf({ result: structuredClone(result), rate });
    Object.freeze(result);
    const first = answerOf({ result, rate });
    const second = answerOf({ result, rate: null });
    expect(first.body).to.equal(fresh.body);
    expect(first.bytes).to.equal(Buffer.byteLength(fresh.body));
    expect(second.body).to.equal(first.body);
    expect(second.rate).to.equal(null);
    expect(fresh.bytes).to.equal(undefined);
  });

  it('reports the rate limit in headers, with Retry-After only on a refusal', () => {
    const now = 1_700_000_000_000;
    expect(rateHeaders(null)).to.deep.equal([]);
    expect(rateHeaders(rate, now)).to.deep.equal([
      ['X-RateLimit-Limit', '600'],
      ['X-RateLimit-Remaining', '599'],
      ['X-RateLimit-Reset', '1700000040'],
    ]);
    // Written a millisecond or a second later, the headers still name the window's end: a client
    // waiting for the window to turn reads the same second from every answer of it.
    for (const later of [now + 1, now + 999, now + 1001])
      expect(rateHeaders(rate, later)).to.deep.include.members([['X-RateLimit-Reset', '1700000040']]);
    expect(rateHeaders({ allowed: false, limit: 60, remaining: -3, resetAt: now + 1500 }, now)).to.deep.include.members([
      ['X-RateLimit-Remaining', '0'],
      ['X-RateLimit-Reset', '1700000002'],
      ['Retry-After', '2'],
    ]);
    // Retry-After never tells a client to come back at once, even once the reset has passed.
    expect(rateHeaders({ allowed: false, limit: 60, remaining: 0, resetAt: now - 10 }, now)).to.deep.include.members([
      ['Retry-After', '1'],
    ]);
  });

  it("writes the lean route's header list flat: its own three headers, then the same rate headers", () => {
    const now = 1_700_000_000_000;
    const own = ['Content-Type', 'application/json; charset=utf-8', 'Content-Length', '42', 'X-Request-Id', 'r1'];
    expect(answerHead('r1', 42, null, now)).to.deep.equal(own);
    for (const decision of [
      rate,
      { allowed: false, limit: 60, remaining: -3, resetAt: now + 1500 },
      { allowed: false, limit: 60, remaining: 0, resetAt: now - 10 },
    ])
      expect(answerHead('r1', 42, decision, now)).to.deep.equal([...own, ...rateHeaders(decision, now).flat()]);
  });
});
