import { createHmac, timingSafeEqual } from 'node:crypto';

/** The provider signs the exact request bytes: hex(HMAC-SHA256(secret, raw body)) in `X-Signature`. */
export const SIGNATURE_HEADER = 'x-signature';

// A SHA-256 MAC is 32 bytes: 64 hex digits. Checking the shape first keeps Buffer.from(…, 'hex')
// from silently truncating at the first non-hex digit, and gives timingSafeEqual equal lengths.
const HEX_SHA256 = /^[0-9a-f]{64}$/i;

/**
 * True when `signature` is the HMAC of `rawBody` under `secret`. Never throws: a missing, short,
 * long or non-hex header is simply not valid. The comparison runs in constant time over the
 * decoded bytes, so hex case does not matter and timing reveals nothing about the expected MAC.
 */
export function verifySignature(secret: string, rawBody: Uint8Array, signature: string | undefined): boolean {
  if (typeof signature !== 'string' || !HEX_SHA256.test(signature)) return false;
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  const given = Buffer.from(signature, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
