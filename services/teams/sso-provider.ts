import * as oidc from 'openid-client';
import { BlockedProviderAddress, providerFetch } from './sso-fetch.ts';

/**
 * A team's OpenID Connect provider, through openid-client: discovery of the issuer's metadata
 * (`/.well-known/openid-configuration`, whose `issuer` must equal the configured one) and the client
 * the team registered there for svc, authenticating with client_secret_basic (the OpenID Connect
 * default). Used when the owner configures it (does it answer?) and on each log-in.
 */

export interface ProviderSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Providers on this machine or a private network (SSO_ALLOW_HTTP_ISSUERS): development and tests only. */
  allowLocal: boolean;
}

/** Seconds any request to a provider may take: a slow provider must not hold a log-in or a configuration forever. */
const TIMEOUT_SECONDS = 10;

/**
 * The provider could not be discovered. Its message says what, in words safe to show the owner: never
 * the secret, nor the provider's own answer (which could carry anything).
 */
export class ProviderUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProviderUnavailable';
  }
}

/**
 * The provider's configuration for this client. Plain http is allowed only for an http issuer, and
 * such an issuer passes validation only where SSO_ALLOW_HTTP_ISSUERS is on (a provider on this machine).
 */
export async function discoverProvider(settings: ProviderSettings): Promise<oidc.Configuration> {
  const issuer = new URL(settings.issuer);
  const insecure = issuer.protocol === 'http:';
  const guarded = providerFetch(settings.allowLocal);
  try {
    const configuration = await oidc.discovery(issuer, settings.clientId, undefined, oidc.ClientSecretBasic(settings.clientSecret), {
      timeout: TIMEOUT_SECONDS,
      [oidc.customFetch]: guarded,
      ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
    });
    // Every later request (the token endpoint, the keys) goes through the same guard: the metadata
    // could name any host.
    configuration[oidc.customFetch] = guarded;
    return configuration;
  } catch (err) {
    throw new ProviderUnavailable(`the issuer ${issuer.href} could not be discovered as an OpenID Connect provider (${reasonOf(err)})`);
  }
}

/** A short, fixed-vocabulary reason: the error's class and code, nothing the provider wrote. */
function reasonOf(err: unknown): string {
  for (let e: unknown = err; e instanceof Error; e = e.cause)
    if (e instanceof BlockedProviderAddress) return 'it is not at a public address';
  if (err instanceof oidc.ResponseBodyError) return `it answered an error: ${err.error}`.slice(0, 200);
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (code === 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED') return 'its metadata names another issuer';
    if (code === 'OAUTH_RESPONSE_IS_NOT_CONFORM') return 'its answer is not OpenID Connect discovery metadata';
    return code;
  }
  const cause = (err as { cause?: { code?: unknown } }).cause?.code;
  if (typeof cause === 'string') return `unreachable: ${cause}`;
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) return `no answer within ${TIMEOUT_SECONDS} s`;
  return 'unreachable';
}
