import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import Provider, { type ProviderAccount } from 'oidc-provider';
import { freePort } from '../../deploy/local/processes.ts';

/**
 * A real OpenID Connect provider for the single sign-on tests: `oidc-provider` (panva's certified
 * implementation) in this process, on a free port of 127.0.0.1, over plain http (the services under
 * test run with SSO_ALLOW_HTTP_ISSUERS=true). One confidential client (client_secret_basic, the
 * authorization code grant only, PKCE required), its development log-in pages (any login and any
 * password; the login is the account's e-mail), and ID tokens that carry `email`, `email_verified`
 * and `name`. `unverified(email)` makes the provider vouch for an address without verifying it;
 * `assertEmail(subject, email)` makes it assert any address for a subject of the caller's choosing.
 */
export interface LocalOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** From now on, this address signs in with `email_verified: false`. */
  unverified(email: string): void;
  /**
   * From now on, the login `subject` (the ID token's `sub`) is asserted with this address, verified: what
   * a provider the team's owner runs can say about anyone (by default a login's address is the login).
   */
  assertEmail(subject: string, email: string): void;
  stop(): Promise<void>;
}

export async function startOidcProvider(options: { redirectUri: string }): Promise<LocalOidcProvider> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const clientId = `svc-${randomBytes(4).toString('hex')}`;
  const clientSecret = randomBytes(32).toString('base64url');
  const notVerified = new Set<string>();
  const asserted = new Map<string, string>();
  const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [options.redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [{ ...signingKey, kid: 'test-signing', use: 'sig', alg: 'RS256' }] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    pkce: { required: () => true },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    // The e-mail in the ID token itself, as the identity providers teams use put it (Google, Entra ID,
    // Okta); by default oidc-provider keeps it for the userinfo endpoint when an access token is issued.
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: true } },
    findAccount: (_ctx: unknown, sub: string): ProviderAccount => ({
      accountId: sub,
      claims: () => ({
        sub,
        email: asserted.get(sub) ?? sub,
        email_verified: !notVerified.has(sub.toLowerCase()),
        name: sub.slice(0, sub.indexOf('@')).replace(/^./, (c) => c.toUpperCase()),
      }),
    }),
  });
  const server: Server = createServer(provider.callback());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    issuer,
    clientId,
    clientSecret,
    unverified: (email) => {
      notVerified.add(email.toLowerCase());
    },
    assertEmail: (subject, email) => {
      asserted.set(subject, email);
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
