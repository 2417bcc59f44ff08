import {
  type AuthInfo,
  bearerAuthChallengeResponse,
  buildOAuthProtectedResourceMetadata,
  OAuthError,
  OAuthErrorCode,
  type OAuthProtectedResourceMetadata,
  type OAuthTokenVerifier,
  verifyBearerToken,
} from '@modelcontextprotocol/server';
import type { Express, Request, Response } from 'express';
import { MCP_SCOPE, OAUTH_ROUTES } from '../../accounts/oauth/authorization-server.ts';
import { openGrantKey } from '../../accounts/oauth/connections.ts';
import type { VerifyAnswer } from '../../accounts/oauth/oauth-input.ts';
import { RESOURCE_PROOF_HEADER, resourceProof } from '../../accounts/oauth/resource-proof.ts';

/** The MCP endpoint's path on this face (mcp.routes.ts has it too; kept here to stay free of a cycle). */
const MCP_PATH = '/mcp';

export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';

export interface ResourceServerOptions {
  /** The MCP endpoint's public URL: the resource tokens must be bound to. */
  resource: string;
  /** The authorization server's issuer (the accounts face's public URL). */
  issuer: string;
  /** Where this server reaches the accounts service (POST /oauth/resource/verify). */
  accountsUrl: string;
  keyEncryptionKey: Buffer;
  /** Plain-http issuers are for development and tests only. */
  allowInsecureIssuer: boolean;
}

/** What a request's credentials come to: an API key to run the gate with, none, or a refusal already answered. */
export type Credential = { kind: 'key'; apiKey: string } | { kind: 'none' } | { kind: 'refused' };

const KEY_PREFIX = /^svc_/;

/**
 * The MCP server as an OAuth 2.1 resource server (MCP authorization, 2025-06-18 and 2025-11-25),
 * with the SDK's helpers: the protected resource metadata (RFC 9728) naming the accounts face as
 * its authorization server, `verifyBearerToken` (audience must be this resource, scope `mcp`,
 * expiry) and its challenge answers. A token is verified with the accounts service on every request
 * (no cache), so a disconnected assistant is refused on its next call; what it stands for is the
 * subscription's API key chosen at consent, which then passes the key gate as the key itself does.
 */
export class ResourceServer {
  readonly metadata: OAuthProtectedResourceMetadata;
  readonly metadataUrl: string;
  readonly #options: ResourceServerOptions;
  readonly #verifier: OAuthTokenVerifier;

  constructor(options: ResourceServerOptions) {
    this.#options = options;
    const resource = new URL(options.resource);
    this.metadataUrl = `${resource.origin}${PROTECTED_RESOURCE_PATH}${resource.pathname === '/' ? '' : resource.pathname}`;
    this.metadata = buildOAuthProtectedResourceMetadata({
      oauthMetadata: {
        issuer: options.issuer,
        authorization_endpoint: `${options.issuer}${OAUTH_ROUTES.authorization}`,
        token_endpoint: `${options.issuer}${OAUTH_ROUTES.token}`,
        registration_endpoint: `${options.issuer}${OAUTH_ROUTES.registration}`,
        response_types_supported: ['code'],
      },
      resourceServerUrl: resource,
      scopesSupported: [MCP_SCOPE],
      resourceName: 'svc vision RAG (MCP)',
      dangerouslyAllowInsecureIssuerUrl: options.allowInsecureIssuer,
    });
    this.#verifier = { verifyAccessToken: (token) => this.#verify(token) };
  }

  /** GET /.well-known/oauth-protected-resource and its path-suffixed form (/…/mcp), as RFC 9728 has clients look. */
  mount(app: Express): void {
    const serve = (_req: Request, res: Response) => {
      res.set({ 'Access-Control-Allow-Origin': '*', 'Cache-Control': 'public, max-age=300' }).json(this.metadata);
    };
    app.get(PROTECTED_RESOURCE_PATH, serve);
    // The endpoint's own path (behind a proxy the public path maps to this one).
    app.get(`${PROTECTED_RESOURCE_PATH}${MCP_PATH}`, serve);
  }

  /**
   * The credential a request presents: an `X-API-Key` (or `Bearer svc_…`) goes to the gate as
   * before; an OAuth access token is verified here and stands for its grant's key; nothing at all
   * gets the 401 whose WWW-Authenticate points at the metadata, which starts an assistant's OAuth flow.
   */
  async credential(req: Request, res: Response, presentedKey: string | undefined): Promise<Credential> {
    if (presentedKey) return { kind: 'key', apiKey: presentedKey };
    const header = req.get('authorization');
    if (!header || KEY_PREFIX.test(header.replace(/^Bearer\s+/i, ''))) {
      res.set('WWW-Authenticate', `Bearer resource_metadata="${this.metadataUrl}", scope="${MCP_SCOPE}"`);
      return { kind: 'none' };
    }
    let auth: AuthInfo;
    try {
      auth = await verifyBearerToken(header, {
        verifier: this.#verifier,
        expectedResource: new URL(this.#options.resource),
        requiredScopes: [MCP_SCOPE],
        resourceMetadataUrl: this.metadataUrl,
      });
    } catch (err) {
      this.#refuse(res, err);
      return { kind: 'refused' };
    }
    const extra = auth.extra as { sealedKey: string; grantId: string; accountId: string };
    return { kind: 'key', apiKey: openGrantKey(extra.sealedKey, this.#options.keyEncryptionKey, extra.grantId, extra.accountId) };
  }

  #refuse(res: Response, err: unknown): void {
    if (err instanceof OAuthError && err.code === OAuthErrorCode.ServerError) {
      res
        .set('Retry-After', '1')
        .status(503)
        .json({ error: 'the authorization server is unavailable; retry shortly', code: 'UNAVAILABLE' });
      return;
    }
    const challenge = bearerAuthChallengeResponse(err, { requiredScopes: [MCP_SCOPE], resourceMetadataUrl: this.metadataUrl });
    const header = challenge.headers.get('www-authenticate');
    if (header) res.set('WWW-Authenticate', header);
    const message = err instanceof OAuthError ? err.message : 'invalid access token';
    res.status(challenge.status).json({ error: message, code: challenge.status === 403 ? 'INSUFFICIENT_SCOPE' : 'INVALID_TOKEN' });
  }

  async #verify(token: string): Promise<AuthInfo> {
    let answer: VerifyAnswer;
    try {
      const res = await fetch(`${this.#options.accountsUrl}/oauth/resource/verify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [RESOURCE_PROOF_HEADER]: resourceProof(this.#options.keyEncryptionKey) },
        body: JSON.stringify({ token: token.slice(0, 4096) }),
        signal: AbortSignal.timeout(5000),
      });
      if (res.status === 400) throw new OAuthError(OAuthErrorCode.InvalidToken, 'invalid access token');
      if (!res.ok) throw new OAuthError(OAuthErrorCode.ServerError, `the authorization server answered ${res.status}`);
      answer = (await res.json()) as VerifyAnswer;
    } catch (err) {
      if (err instanceof OAuthError) throw err;
      throw new OAuthError(OAuthErrorCode.ServerError, 'the authorization server is unreachable');
    }
    if (!answer.active) throw new OAuthError(OAuthErrorCode.InvalidToken, 'the access token is not active (expired, revoked or unknown)');
    return {
      token,
      clientId: answer.clientId,
      scopes: answer.scopes,
      expiresAt: answer.expiresAt,
      // A token bound to no resource, or to one that is no URL, is refused by verifyBearerToken's comparison.
      ...(URL.canParse(answer.resource) ? { resource: new URL(answer.resource) } : {}),
      extra: { sealedKey: answer.sealedKey, grantId: answer.grantId, accountId: answer.accountId },
    };
  }
}
