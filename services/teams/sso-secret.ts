import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { PermanentError } from '../../events/errors.ts';

/**
 * A team's OpenID Connect client secret, sealed for `team.sso-configured` and the workspaces
 * projection: the plaintext never sits in the log or the database. AES-256-GCM under
 * KEY_ENCRYPTION_KEY (the key the API keys travel under, services/keys/key-crypto.ts), written as
 * base64(iv | tag | ciphertext), with the subscription id as additional data: a ciphertext copied
 * into another team's configuration does not open there.
 */
const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

// A purpose label and the length-prefixed id: the AAD cannot be mistaken for an API key's.
function additionalData(subscriptionId: string): Buffer {
  const id = Buffer.from(subscriptionId, 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32BE(id.length);
  return Buffer.concat([Buffer.from('svc.sso-client-secret.v1', 'utf8'), length, id]);
}

/** Never carries the blob or the plaintext: the message may reach a log. */
export class ClientSecretDecryptionError extends PermanentError {
  constructor(reason: string) {
    super(`cannot decrypt the SSO client secret: ${reason}`);
    this.name = 'ClientSecretDecryptionError';
  }
}

function checkKey(key32: Buffer): void {
  if (key32.length !== 32) throw new Error(`key encryption key must be 32 bytes, got ${key32.length}`);
}

export function sealClientSecret(secret: string, key32: Buffer, subscriptionId: string): string {
  checkKey(key32);
  // A fresh random iv each time: GCM loses secrecy and integrity if an iv repeats under one key.
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, key32, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(additionalData(subscriptionId));
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64');
}

export function openClientSecret(blob: string, key32: Buffer, subscriptionId: string): string {
  checkKey(key32);
  // Buffer.from(…, 'base64') silently skips foreign characters, so check the alphabet first.
  if (blob.length % 4 !== 0 || !BASE64.test(blob)) throw new ClientSecretDecryptionError('not base64');
  const bytes = Buffer.from(blob, 'base64');
  if (bytes.length < IV_BYTES + TAG_BYTES) throw new ClientSecretDecryptionError('input too short');
  const decipher = createDecipheriv(ALGORITHM, key32, bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
  decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  decipher.setAAD(additionalData(subscriptionId));
  try {
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    throw new ClientSecretDecryptionError('wrong key or tampered data');
  }
}
