import type { CustomFetch } from 'openid-client';
import { publicFetch } from '../platform/public-fetch.ts';

/**
 * What svc fetches from a team's OpenID Connect provider (discovery, keys, the token endpoint), when
 * the provider is an address the owner typed: only public unicast addresses, unless local providers
 * are allowed (SSO_ALLOW_HTTP_ISSUERS, development and tests). Without it an owner could make the
 * keys or accounts service knock on the private network, and a provider's metadata could name an
 * internal token endpoint.
 */
export { BlockedAddress as BlockedProviderAddress } from '../platform/public-fetch.ts';

/** The fetch openid-client uses for a provider: Node's own where local providers are allowed, else public addresses only. */
export function providerFetch(allowLocal: boolean): CustomFetch {
  const guarded = publicFetch(allowLocal);
  return (url, options) => guarded(url, options as RequestInit);
}
