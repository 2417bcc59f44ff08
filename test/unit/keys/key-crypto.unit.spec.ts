import { expect } from 'chai';
import { createCipheriv, randomBytes } from 'node:crypto';
import { decryptKey, encryptKey, KeyDecryptionError } from '../../../services/keys/key-crypto.ts';

const plaintext = `svc_${'Q'.repeat(29)}wxyz`;

const binding = { keyHash: 'f'.repeat(64), subscriptionId: 'sub-0' };
const body = (blob: string): Buffer => Buffer.from(blob.replace(/^v2:/, ''), 'base64');

function tamper(blob: string, index: number): string {
  const bytes = body(blob);
  bytes[index] = (bytes[index] ?? 0) ^ 0x01;
  return `v2:${bytes.toString('base64')}`;
}

function failsCleanly(fn: () => unknown): void {
  expect(fn)
    .to.throw(KeyDecryptionError, /^cannot decrypt API key: /)
    .that.satisfies((e: Error) => !e.message.includes(plaintext) && !e.message.includes('wxyz'));
}

describe('API key encryption (unit)', () => {
  const key = randomBytes(32);

  it('round-trips, as v2: + iv(12) | tag(16) | ciphertext in base64', () => {
    const blob = encryptKey(plaintext, key, binding);
    expect(body(blob)).to.have.length(12 + 16 + Buffer.byteLength(plaintext));
    expect(blob).not.to.include(plaintext);
    expect(decryptKey(blob, key, binding)).to.equal(plaintext);
    expect(decryptKey(encryptKey('', key, binding), key, binding)).to.equal('');
  });

  it('uses a fresh iv every time', () => {
    const a = encryptKey(plaintext, key, binding);
    const b = encryptKey(plaintext, key, binding);
    expect(a).not.to.equal(b);
    expect(body(a).subarray(0, 12).equals(body(b).subarray(0, 12))).to.equal(false);
  });

  for (const [part, index] of [
    ['iv', 0],
    ['iv end', 11],
    ['tag', 12],
    ['tag end', 27],
    ['ciphertext', 28],
    ['ciphertext end', 28 + 36],
  ] as const) {
    it(`rejects a tampered ${part}`, () => {
      failsCleanly(() => decryptKey(tamper(encryptKey(plaintext, key, binding), index), key, binding));
    });
  }

  it('rejects a wrong key', () => {
    failsCleanly(() => decryptKey(encryptKey(plaintext, key, binding), randomBytes(32), binding));
  });

  it('rejects a truncated or extended blob', () => {
    const bytes = body(encryptKey(plaintext, key, binding));
    failsCleanly(() => decryptKey(`v2:${bytes.subarray(0, bytes.length - 1).toString('base64')}`, key, binding));
    failsCleanly(() => decryptKey(`v2:${Buffer.concat([bytes, Buffer.from([0])]).toString('base64')}`, key, binding));
  });

  it('rejects short input and non-base64 without echoing it', () => {
    for (const blob of ['', 'AAAA', randomBytes(27).toString('base64'), 'not base64!', `${encryptKey(plaintext, key, binding)}!`]) {
      expect(() => decryptKey(blob, key, binding), JSON.stringify(blob))
        .to.throw(KeyDecryptionError)
        .that.satisfies((e: Error) => blob.length < 4 || !e.message.includes(blob));
    }
  });

  it('refuses an encryption key that is not 32 bytes', () => {
    expect(() => encryptKey(plaintext, randomBytes(16), binding)).to.throw(/32 bytes/);
    expect(() => decryptKey(encryptKey(plaintext, key, binding), randomBytes(31), binding)).to.throw(/32 bytes/);
  });
});

describe('API key encryption bound to its event (unit)', () => {
  const key = randomBytes(32);

  /** What encryptKey wrote before the binding: base64(iv | tag | ciphertext), no additional data. */
  function legacyBlob(text: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
    const ciphertext = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64');
  }

  it('writes a versioned blob that decrypts only for the same key hash and subscription', () => {
    const blob = encryptKey(plaintext, key, binding);
    expect(blob.startsWith('v2:')).to.equal(true);
    expect(decryptKey(blob, key, binding)).to.equal(plaintext);
    failsCleanly(() => decryptKey(blob, key, { ...binding, subscriptionId: 'sub-2' }));
    failsCleanly(() => decryptKey(blob, key, { ...binding, keyHash: 'b'.repeat(64) }));
  });

  it('does not let a bound blob pass as an old one by dropping its version', () => {
    failsCleanly(() => decryptKey(encryptKey(plaintext, key, binding).slice('v2:'.length), key, binding));
  });

  it('still reads blobs written before the binding (no version, no additional data)', () => {
    expect(decryptKey(legacyBlob(plaintext), key, binding)).to.equal(plaintext);
  });

  it('refuses an unknown version', () => {
    failsCleanly(() => decryptKey(`v9:${encryptKey(plaintext, key, binding).slice(3)}`, key, binding));
  });
});
