import { expect } from 'chai';
import { verifySignature } from '../../../services/billing/signature.ts';
import { fixture, sign } from '../../support/lemonsqueezy.ts';

const SECRET = 'unit-webhook-secret-0123456789';

describe('payment webhook signature (unit)', () => {
  const { raw } = fixture('subscription_created');
  const good = sign(SECRET, raw);

  it('accepts the HMAC-SHA256 of the exact sample bytes', () => {
    expect(good).to.match(/^[0-9a-f]{64}$/);
    expect(verifySignature(SECRET, raw, good)).to.equal(true);
  });

  it('matches a published HMAC-SHA256 test vector (not just our own signer)', () => {
    const body = Buffer.from('The quick brown fox jumps over the lazy dog');
    expect(verifySignature('key', body, 'f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8')).to.equal(true);
  });

  it('compares bytes, so upper-case hex of the right MAC is accepted', () => {
    expect(verifySignature(SECRET, raw, good.toUpperCase())).to.equal(true);
  });

  it('refuses another secret', () => {
    expect(verifySignature('another-secret-0123456789', raw, good)).to.equal(false);
  });

  it('refuses the same JSON re-serialised (the signature covers bytes, not meaning)', () => {
    const reformatted = Buffer.from(JSON.stringify(JSON.parse(raw.toString('utf8'))));
    expect(reformatted.equals(raw)).to.equal(false);
    expect(verifySignature(SECRET, reformatted, good)).to.equal(false);
  });

  it('refuses a body changed by one byte', () => {
    const tampered = Buffer.from(raw);
    const at = tampered.length - 2;
    tampered.writeUInt8(tampered.readUInt8(at) ^ 1, at);
    expect(verifySignature(SECRET, tampered, good)).to.equal(false);
  });

  const malformed: [string, string | undefined][] = [
    ['no header', undefined],
    ['an empty header', ''],
    ['a truncated MAC', good.slice(0, 63)],
    ['half the MAC (a valid hex prefix)', good.slice(0, 32)],
    ['a MAC with extra digits', `${good}00`],
    ['64 non-hex characters', 'z'.repeat(64)],
    ['a hex MAC ending in a non-hex character', `${good.slice(0, 63)}g`],
    ['a prefixed MAC', `sha256=${good}`],
    ['the MAC with surrounding spaces', ` ${good} `],
    ['base64 of the MAC', Buffer.from(good, 'hex').toString('base64')],
  ];
  for (const [what, header] of malformed) {
    it(`refuses ${what} without throwing`, () => {
      expect(() => verifySignature(SECRET, raw, header)).not.to.throw();
      expect(verifySignature(SECRET, raw, header)).to.equal(false);
    });
  }

  it('verifies an empty body like any other', () => {
    const empty = Buffer.alloc(0);
    expect(verifySignature(SECRET, empty, sign(SECRET, empty))).to.equal(true);
    expect(verifySignature(SECRET, empty, good)).to.equal(false);
  });
});
