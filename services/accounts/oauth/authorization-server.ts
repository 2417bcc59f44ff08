import { createPrivateKey, hkdfSync } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Db } from 'mongodb';
import Provider, { errors, type ClientRecord } from 'oidc-provider';
import { mongoAdapter } from './mongo-adapter.ts';

/** The one scope an assistant asks for: calling the MCP server's tools with the chosen subscription. */
export const MCP_SCOPE = 'mcp';

/** The provider's endpoints, under /oauth so none of them meets the accounts service's own /auth routes. */
export const OAUTH_ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/oauth/register',
  revocation: '/oauth/revoke',
  introspection: '/oauth/introspect',
  jwks: '/oauth/jwks',
  end_session: '/oauth/end-session',
  userinfo: '/oauth/userinfo',
  pushed_authorization_request: '/oauth/par',
  backchannel_authentication: '/oauth/backchannel',
  code_verification: '/oauth/device',
  device_authorization: '/oauth/device/auth',
  challenge: '/oauth/challenge',
  credential: '/oauth/credential',
} as const;

export const TTL = {
  /** Short: a leaked access token is useful for minutes, and only at the MCP server. */
  accessToken: 600,
  authorizationCode: 60,
  refreshToken: 30 * 24 * 3600,
  interaction: 900,
  session: 900,
  grant: 30 * 24 * 3600,
} as const;

export interface AuthorizationServerOptions {
  /** The accounts face's public URL: the issuer. */
  issuer: string;
  /** The MCP server's public URL: the one resource tokens are minted for (RFC 8707). */
  mcpResource: string;
  /** The console's public URL: log-in and consent happen there. */
  consoleUrl: string;
  db: Db;
  /** Cookie signing and the token signing key derive from it, so every replica agrees. */
  secret: string;
  /**
   * How client ID metadata documents are fetched: through the guard for addresses a stranger chose
   * (services/platform/public-fetch.ts), public addresses only outside development and tests.
   */
  clientMetadataFetch: (url: string | URL, init?: RequestInit) => Promise<Response>;
  /**
   * Whether the request's client address may make the server fetch one more document (per address,
   * shared by every replica). Undefined outside a provider request (the console's consent page
   * looking up a client another replica fetched).
   */
  mayFetchClientMetadata: (request: IncomingMessage | undefined) => Promise<boolean>;
}

/** The client ID metadata document draft oidc-provider 9.13 implements; its experimental features need the version acknowledged. */
const CLIENT_ID_METADATA_DRAFT = 'draft-02';

/** A redirect an assistant may name in its metadata document: https, or http on the loopback interface (a desktop assistant's listener). */
function acceptableRedirect(uri: string): boolean {
  const url = URL.parse(uri);
  if (!url) return false;
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && (url.hostname === '127.0.0.1' || url.hostname === '[::1]' || url.hostname === 'localhost');
}

/** An Ed25519 signing key derived from the secret: the same on every replica, nothing to distribute. */
function signingJwk(secret: string): Record<string, unknown> {
  const seed = Buffer.from(hkdfSync('sha256', secret, 'svc-oauth', 'signing key', 32));
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
  const jwk = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }).export({ format: 'jwk' });
  return { ...jwk, kid: 'svc-oauth-1', use: 'sig', alg: 'EdDSA' };
}

const sameResource = (a: string, b: string): boolean => {
  const norm = (s: string) => s.replace(/#.*$/, '').replace(/\/$/, '');
  return norm(a) === norm(b);
};

/**
 * The authorization server: oidc-provider (panva's certified OAuth 2.1 / OpenID Connect server)
 * configured for one resource, the MCP server. Authorization code with PKCE (S256 only: the
 * provider supports no other method) for public clients; the `resource` parameter required at the
 * authorization and token endpoints and checked against the MCP server's URL (RFC 8707); opaque
 * access tokens bound to it for TTL.accessToken; refresh tokens rotated on every use, and a reused
 * one revokes the whole grant (the provider's reuse detection); revocation (RFC 7009); dynamic
 * client registration (RFC 7591) and client ID metadata documents (a client_id that is the https URL
 * of the client's own metadata, fetched through the public-address guard, at most 5 kB, cached by its
 * HTTP caching headers between 30 s and a day); metadata at /.well-known/oauth-authorization-server
 * (RFC 8414). Log-in and consent are the console's pages (interactions.url).
 */
export function createAuthorizationServer(options: AuthorizationServerOptions): Provider {
  const resourceRequired = (ctx: { oidc: { route: string } }) => {
    if (ctx.oidc.route === 'authorization' || ctx.oidc.route === 'token' || ctx.oidc.route === 'pushed_authorization_request')
      throw new errors.InvalidTarget(`the resource parameter is required: ${options.mcpResource}`);
    return undefined;
  };
  const provider = new Provider(options.issuer, {
    adapter: mongoAdapter(options.db),
    clients: [],
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'EdDSA',
    },
    routes: OAUTH_ROUTES,
    scopes: [MCP_SCOPE, 'offline_access'],
    claims: { openid: ['sub'] },
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true, initialAccessToken: false },
      clientIdMetadataDocument: {
        enabled: true,
        ack: CLIENT_ID_METADATA_DRAFT,
        allowFetch: (ctx: { req?: IncomingMessage } | undefined) => options.mayFetchClientMetadata(ctx?.req),
        allowClient: (_ctx: unknown, client: ClientRecord) =>
          client.redirectUris.length > 0 && client.redirectUris.every(acceptableRedirect),
        cacheDuration: { min: 30, max: 86_400 },
      },
      revocation: { enabled: true },
      introspection: { enabled: false },
      userinfo: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: resourceRequired,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resource: string) => {
          if (!sameResource(resource, options.mcpResource))
            throw new errors.InvalidTarget(`this server issues tokens for ${options.mcpResource} only`);
          return { scope: MCP_SCOPE, audience: options.mcpResource, accessTokenTTL: TTL.accessToken, accessTokenFormat: 'opaque' };
        },
      },
    },
    fetch: (url: string | URL, init: RequestInit & { dispatcher?: unknown }) => {
      // The provider's own SSRF dispatcher is replaced by the platform's guard (the one SSO uses).
      const { dispatcher: _theirs, ...rest } = init;
      return options.clientMetadataFetch(url, rest);
    },
    rotateRefreshToken: true,
    issueRefreshToken: (_ctx: unknown, client: { grantTypeAllowed(t: string): boolean }) => client.grantTypeAllowed('refresh_token'),
    ttl: {
      AccessToken: TTL.accessToken,
      AuthorizationCode: TTL.authorizationCode,
      RefreshToken: TTL.refreshToken,
      Interaction: TTL.interaction,
      Session: TTL.session,
      Grant: TTL.grant,
    },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `${options.consoleUrl}/oauth/connect/${interaction.uid}` },
    findAccount: (_ctx: unknown, sub: string) => ({ accountId: sub, claims: () => ({ sub }) }),
    cookies: { keys: [Buffer.from(hkdfSync('sha256', options.secret, 'svc-oauth', 'cookies', 32)).toString('base64url')] },
    jwks: { keys: [signingJwk(options.secret)] },
    // Browser-based assistants call the token endpoint from the page their redirect URI is on.
    clientBasedCORS: (_ctx: unknown, origin: string, client: ClientRecord) =>
      origin !== 'null' && client.redirectUris.some((uri) => URL.parse(uri)?.origin === origin),
    // Every refusal as the provider's JSON error body, never an HTML page with the request's values in it.
    renderError: (ctx: { type: string; body: unknown }, out: Record<string, unknown>) => {
      ctx.type = 'application/json';
      ctx.body = out;
    },
  });
  provider.proxy = true;
  return provider;
}
