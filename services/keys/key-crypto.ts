import { PermanentError } from '../../events/errors.ts';
import { open, seal, type SealContext } from '../platform/sealed-box.ts';

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
const BOUND = 'v2:';

/** The event a key travels in: its ciphertext opens only there. */
export interface KeyBinding {
  keyHash: string;
  subscriptionId: string;
}

const contextOf = (binding: KeyBinding): SealContext => ({ label: 'svc.key.v2', fields: [binding.keyHash, binding.subscriptionId] });

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

export function encryptKey(plaintext: string, key32: Buffer, binding: KeyBinding): string {
  return BOUND + seal(plaintext, key32, contextOf(binding));
}

/** Opens a blob for the event that carries it; a blob without the version prefix is one from before binding. */
export function decryptKey(blob: string, key32: Buffer, binding: KeyBinding): string {
  const bound = blob.startsWith(BOUND);
  return open(
    bound ? blob.slice(BOUND.length) : blob,
    key32,
    bound ? contextOf(binding) : null,
    (reason) => new KeyDecryptionError(reason),
  );
}
