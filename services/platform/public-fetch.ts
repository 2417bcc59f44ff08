import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent } from 'undici';
import { blockedAddressReason, isIpLiteral } from './ip-address.ts';

/**
 * Fetches of an address a customer or a stranger chose (a team's OpenID Connect provider, an
 * assistant's client metadata document): public unicast addresses only, unless local ones are allowed
 * (development and tests). Without it anyone who can name a URL could make svc knock on its private
 * network.
 *
 * The check is in the connection's own DNS lookup, so the address judged is the address connected
 * to (a name that resolves to a public address when checked and to a private one when connected,
 * DNS rebinding, does not get through); an IP literal skips DNS and is judged before the request.
 */
export class BlockedAddress extends Error {
  readonly code = 'ADDRESS_BLOCKED';
  constructor(host: string) {
    super(`host ${host} is not a public address`);
    this.name = 'BlockedAddress';
  }
}

const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, '', 0);
    if (addresses.length === 0 || addresses.some((a) => blockedAddressReason(a.address) !== undefined)) {
      return callback(new BlockedAddress(hostname), '', 0);
    }
    // net's lookup callback takes the whole list when `all` was asked for.
    if (options.all) return callback(null, addresses);
    const first = addresses[0]!;
    return callback(null, first.address, first.family);
  });
};

const publicOnly = new Agent({ connect: { lookup: guardedLookup } });

/** Node's fetch where local addresses are allowed; else the same fetch through the guarded dispatcher. */
export function publicFetch(allowLocal: boolean): (url: string | URL, init?: RequestInit) => Promise<Response> {
  if (allowLocal) return (url, init) => fetch(url, init);
  return async (url, init) => {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    if (isIpLiteral(host) && blockedAddressReason(host) !== undefined) throw new BlockedAddress(host);
    // Node's fetch is undici: it takes the guarded dispatcher as it is, and answers its own Response.
    return fetch(url, { ...init, dispatcher: publicOnly } as RequestInit);
  };
}
