import { createHmac } from 'node:crypto';

/**
 * What the MCP server shows the accounts service when it asks about an access token (POST
 * /oauth/resource/verify): an HMAC under KEY_ENCRYPTION_KEY, which both hold and nobody else does.
 * The answer carries the grant's key sealed under the same key.
 */
export const RESOURCE_PROOF_HEADER = 'x-svc-resource-proof';

export const resourceProof = (key32: Buffer): string =>
  createHmac('sha256', key32).update('svc oauth resource server v1').digest('base64url');
