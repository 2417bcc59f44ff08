import { PermanentError } from '../../events/errors.ts';
import { open, seal, type SealContext } from '../platform/sealed-box.ts';

/**
 * A team's OpenID Connect client secret, sealed for `team.sso-configured` and the workspaces
 * projection: the plaintext never sits in the log or the database. AES-256-GCM under
 * KEY_ENCRYPTION_KEY (the key the API keys travel under), with its purpose and the subscription id as
 * additional data: a ciphertext copied into another team's configuration does not open there, nor
 * does an API key's blob.
 */
const contextOf = (subscriptionId: string): SealContext => ({ label: 'svc.sso-client-secret.v1', fields: [subscriptionId] });

/** Never carries the blob or the plaintext: the message may reach a log. */
export class ClientSecretDecryptionError extends PermanentError {
  constructor(reason: string) {
    super(`cannot decrypt the SSO client secret: ${reason}`);
    this.name = 'ClientSecretDecryptionError';
  }
}

export const sealClientSecret = (secret: string, key32: Buffer, subscriptionId: string): string =>
  seal(secret, key32, contextOf(subscriptionId));

export const openClientSecret = (blob: string, key32: Buffer, subscriptionId: string): string =>
  open(blob, key32, contextOf(subscriptionId), (reason) => new ClientSecretDecryptionError(reason));
