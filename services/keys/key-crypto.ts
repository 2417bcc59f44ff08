import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { PermanentError } from '../../events/errors.ts';

/**
 * AES-256-GCM for an API key in transit to the mailer: the plaintext key must never sit in the
 * log, so `key.generated` carries `v2:` + base64(iv | tag | ciphertext) and only the mailer opens it.
 *
 * The key hash and subscription id of its event are the additional authenticated data, so a
 * ciphertext copied into another event (another subscription's e-mail) does not decrypt. Blobs
 * written before that have no version prefix (`:` is not base64, so the two cannot be confused)
 * and no additional data; they still decrypt, so old events replay, and the mailer's check that
 * the key hashes to the event's key hash covers them.
 */
const ALGORITHM = 'aes-256-gcm';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const BOUND = 'v2:';

/** The event a key travels in: its ciphertext opens only there. */
export interface KeyBinding {
  keyHash: string;
  subscriptionId: string;
}

// Length-prefixed fields: no pair of (hash, subscription) can spell another pair's bytes.
function additionalData(binding: KeyBinding): Buffer {
  const field = (s: string) => {
    const bytes = Buffer.from(s, 'utf8');
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length);
    return Buffer.concat([length, bytes]);
  };
  return Buffer.concat([Buffer.from('svc.key.v2', 'utf8'), field(binding.keyHash), field(binding.subscriptionId)]);
}

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

export function encryptKey(plaintext: string, key32: Buffer, binding: KeyBinding): string {
  checkKey(key32);
  // A fresh random iv per message: GCM loses both secrecy and integrity if an iv repeats under one key.
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, key32, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(additionalData(binding));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return BOUND + Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64');
}

/** Opens a blob for the event that carries it; a blob without the version prefix is one from before binding. */
export function decryptKey(blob: string, key32: Buffer, binding: KeyBinding): string {
  checkKey(key32);
  const bound = blob.startsWith(BOUND);
  const body = bound ? blob.slice(BOUND.length) : blob;
  // Buffer.from(…, 'base64') silently skips foreign characters, so check the alphabet first.
  if (body.length % 4 !== 0 || !BASE64.test(body)) throw new KeyDecryptionError('not base64');
  const bytes = Buffer.from(body, 'base64');
  if (bytes.length < IV_BYTES + TAG_BYTES) throw new KeyDecryptionError('input too short');
  const iv = bytes.subarray(0, IV_BYTES);
  const tag = bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES);
  const ciphertext = bytes.subarray(IV_BYTES + TAG_BYTES);
  const decipher = createDecipheriv(ALGORITHM, key32, iv, { authTagLength: TAG_BYTES });
  decipher.setAuthTag(tag);
  if (bound) decipher.setAAD(additionalData(binding));
  try {
    // Nothing is returned before final() has verified the tag.
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
  } catch {
    throw new KeyDecryptionError('wrong key or tampered data');
  }
}
