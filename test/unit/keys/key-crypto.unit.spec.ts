import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { decryptKey, encryptKey, KeyDecryptionError } from '../../../services/keys/key-crypto.ts';

const plaintext = `svc_${'Q'.repeat(29)}wxyz`;

function tamper(blob: string, index: number): string {
  const bytes = Buffer.from(blob, 'base64');
  bytes[index] = (bytes[index] ?? 0) ^ 0x01;
  return bytes.toString('base64');
}

function failsCleanly(fn: () => unknown): void {
  expect(fn)
    .to.throw(KeyDecryptionError, /^cannot decrypt API key: /)
    .that.satisfies((e: Error) => !e.message.includes(plaintext) && !e.message.includes('wxyz'));
}

describe('API key encryption (unit)', () => {
  const key = randomBytes(32);

  it('round-trips, as iv(12) | tag(16) | ciphertext in base64', () => {
    const blob = encryptKey(plaintext, key);
    expect(Buffer.from(blob, 'base64')).to.have.length(12 + 16 + Buffer.byteLength(plaintext));
    expect(blob).not.to.include(plaintext);
    expect(decryptKey(blob, key)).to.equal(plaintext);
    expect(decryptKey(encryptKey('', key), key)).to.equal('');
  });

  it('uses a fresh iv every time', () => {
    const a = encryptKey(plaintext, key);
    const b = encryptKey(plaintext, key);
    expect(a).not.to.equal(b);
    expect(Buffer.from(a, 'base64').subarray(0, 12).equals(Buffer.from(b, 'base64').subarray(0, 12))).to.equal(false);
  });

  for (const [part, index] of [['iv', 0], ['iv end', 11], ['tag', 12], ['tag end', 27], ['ciphertext', 28], ['ciphertext end', 28 + 36]] as const) {
    it(`rejects a tampered ${part}`, () => {
      failsCleanly(() => decryptKey(tamper(encryptKey(plaintext, key), index), key));
    });
  }

  it('rejects a wrong key', () => {
    failsCleanly(() => decryptKey(encryptKey(plaintext, key), randomBytes(32)));
  });

  it('rejects a truncated or extended blob', () => {
    const bytes = Buffer.from(encryptKey(plaintext, key), 'base64');
    failsCleanly(() => decryptKey(bytes.subarray(0, bytes.length - 1).toString('base64'), key));
    failsCleanly(() => decryptKey(Buffer.concat([bytes, Buffer.from([0])]).toString('base64'), key));
  });

  it('rejects short input and non-base64 without echoing it', () => {
    for (const blob of ['', 'AAAA', randomBytes(27).toString('base64'), 'not base64!', `${encryptKey(plaintext, key)}!`]) {
      expect(() => decryptKey(blob, key), JSON.stringify(blob))
        .to.throw(KeyDecryptionError)
        .that.satisfies((e: Error) => blob.length < 4 || !e.message.includes(blob));
    }
  });

  it('refuses an encryption key that is not 32 bytes', () => {
    expect(() => encryptKey(plaintext, randomBytes(16))).to.throw(/32 bytes/);
    expect(() => decryptKey(encryptKey(plaintext, key), randomBytes(31))).to.throw(/32 bytes/);
  });
});
