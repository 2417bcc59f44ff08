import { newEvent, type Causation } from '../../events/envelope.ts';
import type { KeyGenerated, KeyGeneratedData } from './events.ts';
import { encryptKey } from './key-crypto.ts';
import { generateApiKey, hashKey, last4 } from './key-format.ts';

/** A fresh key and its key.generated event: hash and last four in the clear, the key itself encrypted. */
export function mintKey(
  owner: Pick<KeyGeneratedData, 'tier' | 'customerId' | 'subscriptionId' | 'email' | 'source'> &
    Partial<Pick<KeyGeneratedData, 'generation' | 'replacesLast4' | 'expiresAt' | 'previousValidUntil' | 'memberUserId' | 'membershipId'>>,
  encryptionKey: Buffer,
  cause: Causation,
): { apiKey: string; event: KeyGenerated } {
  const apiKey = generateApiKey();
  const keyHash = hashKey(apiKey);
  const event: KeyGenerated = newEvent(
    'key.generated',
    {
      generation: 0,
      replacesLast4: null,
      expiresAt: null,
      previousValidUntil: null,
      memberUserId: null,
      membershipId: null,
      ...owner,
      keyHash,
      last4: last4(apiKey),
      encryptedKey: encryptKey(apiKey, encryptionKey, { keyHash, subscriptionId: owner.subscriptionId }),
    },
    cause,
  );
  return { apiKey, event };
}
