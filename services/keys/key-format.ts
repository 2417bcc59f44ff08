import { hash, randomBytes } from 'node:crypto';

/** API key format: `svc_` + 33 symbols from A-Z a-z 0-9 (37 characters), from crypto randomness. */
export const KEY_PREFIX = 'svc_';
export const KEY_BODY_LENGTH = 33;
export const KEY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

const WELL_FORMED = /^svc_[A-Za-z0-9]{33}$/;

// 256 = 4 * 62 + 8: mapping every byte with `% 62` would make the first 8 symbols 25% likelier,
// so bytes at or above 248 are thrown away and only the unbiased range is used.
const ACCEPT_BELOW = Math.floor(256 / KEY_ALPHABET.length) * KEY_ALPHABET.length;
// About 3% of bytes are rejected; drawing a few spare bytes per batch makes a second draw rare.
const BATCH = KEY_BODY_LENGTH + 8;

/** Source of random bytes; injectable only so tests can prove the rejection sampling. */
export type RandomBytes = (size: number) => Uint8Array;

export function generateApiKey(random: RandomBytes = randomBytes): string {
  let body = '';
  while (body.length < KEY_BODY_LENGTH) {
    for (const byte of random(BATCH)) {
      if (byte >= ACCEPT_BELOW) continue;
      body += KEY_ALPHABET[byte % KEY_ALPHABET.length];
      if (body.length === KEY_BODY_LENGTH) break;
    }
  }
  return KEY_PREFIX + body;
}

export function isWellFormedKey(s: string): boolean {
  return WELL_FORMED.test(s);
}

/** Keys are stored and looked up only by this hash; the plaintext is never kept. */
export function hashKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** The last four characters: enough for a user to tell keys apart, useless to an attacker. */
export function last4(key: string): string {
  return key.slice(-4);
}
