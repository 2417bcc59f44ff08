import { hash, timingSafeEqual } from 'node:crypto';

/**
 * Compares two secrets (keys, tokens or their hashes) in time that does not depend on where they
 * differ. Both sides are hashed first so that unequal lengths neither throw nor leak through timing.
 */
export function keysEqualConstantTime(a: string, b: string): boolean {
  const digest = (s: string) => hash('sha256', s, 'buffer');
  return timingSafeEqual(digest(a), digest(b));
}
