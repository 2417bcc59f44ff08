import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { PermanentError } from '../../events/errors.ts';

/**
 * AES-256-GCM for an API key in transit to the mailer: the plaintext key must never sit in the
 * log, so `key.generated` carries base64(iv | tag | ciphertext) and only the mailer opens it.
 */
const ALGORITHM = 'aes-256-gcm';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Never carries the blob or the plaintext: the message ends up in logs and DLQ headers. Permanent:
 * the same blob fails the same way under the same key, so its e-mail goes to the dead-letter topic.
 */
export class KeyDecryptionError extends PermanentError {
  constructor(reason: string) {
    super(`cannot decrypt API key: ${reason}`);
    this.name = 'KeyDecryptionError';
  }
}

function checkKey(key32: Buffer): void {
  if (key32.length !== KEY_BYTES) throw new Error(`key encryption key must be ${KEY_BYTES} bytes, got ${key32.length}`);
}

export function encryptKey(plaintext: string, key32: Buffer): string {
  checkKey(key32);
  // A fresh random iv per message: GCM loses both secrecy and integrity if an iv repeats under one key.
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, key32, iv, { authTagLength: TAG_BYTES });
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64');
}

export function decryptKey(blob: string, key32: Buffer): string {
  checkKey(key32);
  // Buffer.from(…, 'base64') silently skips foreign characters, so check the alphabet first.
  if (blob.length % 4 !== 0 || !BASE64.test(blob)) throw new KeyDecryptionError('not base64');
  const bytes = Buffer.from(blob, 'base64');
  if (bytes.length < IV_BYTES + TAG_BYTES) throw new KeyDecryptionError('input too short');
  const iv = bytes.subarray(0, IV_BYTES);
  const tag = bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES);
  const ciphertext = bytes.subarray(IV_BYTES + TAG_BYTES);
  const decipher = createDecipheriv(ALGORITHM, key32, iv, { authTagLength: TAG_BYTES });
  decipher.setAuthTag(tag);
  try {
    // Nothing is returned before final() has verified the tag.
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
  } catch {
    throw new KeyDecryptionError('wrong key or tampered data');
  }
}
