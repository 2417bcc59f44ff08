import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM for a secret that must travel or rest sealed (an API key on its way to the mailer, a
 * team's SSO client secret): base64(iv | tag | ciphertext) under a 32-byte key.
 *
 * What the blob is for is its additional authenticated data: a purpose label and length-prefixed
 * fields (the event's key hash, the subscription), so a blob copied into another event, another
 * team or another purpose does not open. Length prefixes keep one tuple of fields from spelling
 * another's bytes.
 */
export interface SealContext {
  label: string;
  fields: readonly string[];
}

const ALGORITHM = 'aes-256-gcm';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function additionalData(context: SealContext): Buffer {
  const field = (s: string) => {
    const bytes = Buffer.from(s, 'utf8');
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length);
    return Buffer.concat([length, bytes]);
  };
  return Buffer.concat([Buffer.from(context.label, 'utf8'), ...context.fields.map(field)]);
}

function checkKey(key32: Buffer): void {
  if (key32.length !== KEY_BYTES) throw new Error(`key encryption key must be ${KEY_BYTES} bytes, got ${key32.length}`);
}

export function seal(plaintext: string, key32: Buffer, context: SealContext): string {
  checkKey(key32);
  // A fresh random iv per message: GCM loses both secrecy and integrity if an iv repeats under one key.
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, key32, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(additionalData(context));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64');
}

/**
 * Opens a blob sealed for `context` (null: one sealed without additional data, from before binding).
 * `fail` makes the caller's error from a reason that never holds the blob or the plaintext.
 */
export function open(blob: string, key32: Buffer, context: SealContext | null, fail: (reason: string) => Error): string {
  checkKey(key32);
  // Buffer.from(…, 'base64') silently skips foreign characters, so check the alphabet first.
  if (blob.length % 4 !== 0 || !BASE64.test(blob)) throw fail('not base64');
  const bytes = Buffer.from(blob, 'base64');
  if (bytes.length < IV_BYTES + TAG_BYTES) throw fail('input too short');
  const decipher = createDecipheriv(ALGORITHM, key32, bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
  decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  if (context) decipher.setAAD(additionalData(context));
  try {
    // Nothing is returned before final() has verified the tag.
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    throw fail('wrong key or tampered data');
  }
}
