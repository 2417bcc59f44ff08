import { expect } from 'chai';
import { generateApiKey, hashKey, isWellFormedKey, KEY_ALPHABET, last4 } from '../../../services/keys/key-format.ts';
import { keysEqualConstantTime } from '../../../services/platform/secrets.ts';

describe('API key format (unit)', () => {
  it('generates svc_ + 33 alphanumerics, all different', () => {
    const keys = Array.from({ length: 2000 }, () => generateApiKey());
    for (const key of keys) {
      expect(key).to.have.length(37);
      expect(key).to.match(/^svc_[A-Za-z0-9]{33}$/);
      expect(isWellFormedKey(key)).to.equal(true);
    }
    expect(new Set(keys).size).to.equal(keys.length);
  });

  it('uses every symbol with even frequency (no modulo bias)', () => {
    const counts = new Map<string, number>();
    const n = 20_000;
    for (let i = 0; i < n; i++) {
      for (const c of generateApiKey().slice(4)) counts.set(c, (counts.get(c) ?? 0) + 1);
    }
    expect(counts.size).to.equal(62);
    const expected = (n * 33) / 62; // ≈ 10 645, standard deviation ≈ 102
    // `% 62` without rejection would make A-H about 21% likelier; ±10% is ~10 sigma, so this never flakes.
    for (const [symbol, count] of counts) {
      expect(Math.abs(count - expected) / expected, `symbol ${symbol}: ${count}`).to.be.lessThan(0.1);
    }
  });

  it('throws away bytes 248..255 instead of mapping them', () => {
    // First draw: only rejectable bytes (modulo would have made them A..H); afterwards only byte 1 ('B').
    const draws: number[] = [];
    const random = (size: number) => {
      draws.push(size);
      return Uint8Array.from({ length: size }, (_, i) => (draws.length === 1 ? 248 + (i % 8) : 1));
    };
    expect(generateApiKey(random)).to.equal(`svc_${'B'.repeat(33)}`);
    expect(draws).to.have.length(2);
  });

  it('maps accepted bytes onto A-Z a-z 0-9 in order', () => {
    const script = [0, 25, 26, 51, 52, 61, 62, 247];
    let next = 0;
    const random = (size: number) => Buffer.from(Array.from({ length: size }, () => script[next++ % script.length] ?? 0));
    expect(generateApiKey(random).slice(4, 12)).to.equal('AZaz09A9');
    expect(KEY_ALPHABET).to.have.length(62);
  });

  it('recognises only exactly well-formed keys', () => {
    const good = `svc_${'a'.repeat(33)}`;
    expect(isWellFormedKey(good)).to.equal(true);
    for (const bad of [
      `svc_${'a'.repeat(32)}`,
      `svc_${'a'.repeat(34)}`,
      `SVC_${'a'.repeat(33)}`,
      `svc_${'a'.repeat(32)}-`,
      `${good}\n`,
      ` ${good}`,
      '',
    ]) {
      expect(isWellFormedKey(bad), JSON.stringify(bad)).to.equal(false);
    }
  });

  it('hashes to 64 lowercase hex, deterministically', () => {
    const key = generateApiKey();
    expect(hashKey(key)).to.match(/^[0-9a-f]{64}$/);
    expect(hashKey(key)).to.equal(hashKey(key));
    expect(hashKey(key)).not.to.equal(hashKey(generateApiKey()));
    expect(hashKey('abc')).to.equal('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('gives the last four characters', () => {
    expect(last4(`svc_${'x'.repeat(29)}Ab3Z`)).to.equal('Ab3Z');
  });

  it('compares in constant time, also across lengths', () => {
    const h = hashKey('k');
    expect(keysEqualConstantTime(h, hashKey('k'))).to.equal(true);
    expect(keysEqualConstantTime(h, hashKey('l'))).to.equal(false);
    expect(keysEqualConstantTime(h, h.slice(1))).to.equal(false);
    expect(keysEqualConstantTime('', '')).to.equal(true);
  });
});
