import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import type { CustomFetch } from 'openid-client';
import { Agent } from 'undici';
import { blockedAddressReason, isIpLiteral } from '../platform/ip-address.ts';

/**
 * What svc fetches from a team's OpenID Connect provider (discovery, keys, the token endpoint), when
 * the provider is an address the owner typed: only public unicast addresses, unless local providers
 * are allowed (SSO_ALLOW_HTTP_ISSUERS, development and tests). Without it an owner could make the
 * keys or accounts service knock on the private network, and a provider's metadata could name an
 * internal token endpoint.
 *
 * The check is in the connection's own DNS lookup, so the address judged is the address connected
 * to (a name that resolves to a public address when checked and to a private one when connected,
 * DNS rebinding, does not get through); an IP literal skips DNS and is judged before the request.
 */
export class BlockedProviderAddress extends Error {
  readonly code = 'SSO_PROVIDER_ADDRESS_BLOCKED';
  constructor(host: string) {
    super(`host ${host} is not a public address`);
    this.name = 'BlockedProviderAddress';
  }
}

const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, '', 0);
    if (addresses.length === 0 || addresses.some((a) => blockedAddressReason(a.address) !== undefined)) {
      return callback(new BlockedProviderAddress(hostname), '', 0);
    }
    // net's lookup callback takes the whole list when `all` was asked for.
    if (options.all) return callback(null, addresses);
    const first = addresses[0]!;
    return callback(null, first.address, first.family);
  });
};

const publicOnly = new Agent({ connect: { lookup: guardedLookup } });

/** The fetch openid-client uses for a provider: Node's own where local providers are allowed, else public addresses only. */
export function providerFetch(allowLocal: boolean): CustomFetch {
  if (allowLocal) return (url, options) => fetch(url, options as RequestInit);
  return async (url, options) => {
    const host = new URL(url).hostname;
    if (isIpLiteral(host) && blockedAddressReason(host) !== undefined) throw new BlockedProviderAddress(host);
    // Node's fetch is undici: it takes the guarded dispatcher as it is, and answers its own Response.
    return fetch(url, { ...(options as RequestInit), dispatcher: publicOnly });
  };
}
