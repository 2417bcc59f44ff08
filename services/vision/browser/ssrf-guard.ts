import { lookup as dnsLookup } from 'node:dns/promises';
import { isIPv6 } from 'node:net';
import { isAllowListed, normalizeHost, type AllowList } from '../../platform/allow-list.ts';
import { blockedAddressReason, isIpLiteral, parseIPv6 } from '../../platform/ip-address.ts';

/**
 * Server-side request forgery policy: which URLs and connections a capture may make. A customer's
 * page may only reach public addresses over http(s)/ws(s), unless the host is allow-listed
 * (CAPTURE_ALLOWED_HOSTS, parsed in platform/allow-list.ts). The pure parts (URL and host-name
 * rules, judging a set of resolved addresses) are exported for tests; `SsrfGuard` adds DNS, once per
 * host name per capture.
 * How the browser is made to obey it is in guarded-context.ts and socks-proxy.ts.
 */

export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

export type Verdict =
  | { readonly allowed: true; readonly addresses: readonly ResolvedAddress[] }
  | { readonly allowed: false; readonly reason: string };

export interface Target {
  readonly host: string;
  readonly port: number;
}

export type Lookup = (host: string) => Promise<readonly ResolvedAddress[]>;

const DEFAULT_PORTS: Readonly<Record<string, number>> = { 'http:': 80, 'https:': 443, 'ws:': 80, 'wss:': 443 };

/** Host names refused without asking DNS: they name the machine itself or its provider's internals. */
const BLOCKED_NAMES = new Set([
  'localhost',
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
]);
const BLOCKED_SUFFIXES = ['.localhost', '.internal', '.local', '.localdomain', '.home.arpa'];

/** One spelling per host:port (IPv6 written out in full), to match a connection to a request. */
export const targetKey = (host: string, port: number): string => {
  const name = normalizeHost(host);
  return isIPv6(name)
    ? `[${parseIPv6(name)
        .map((w) => w.toString(16))
        .join(':')}]:${port}`
    : `${name}:${port}`;
};

/** Where a URL would connect, or why it may not be fetched at all (scheme, no host). Pure. */
export function urlTarget(
  url: string,
  schemes: readonly string[] = ['http:', 'https:', 'ws:', 'wss:'],
): Target | { readonly reason: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { reason: 'not a valid URL' };
  }
  if (!schemes.includes(parsed.protocol)) return { reason: `scheme ${parsed.protocol} is not allowed` };
  if (parsed.hostname === '') return { reason: 'URL has no host' };
  const port = parsed.port === '' ? DEFAULT_PORTS[parsed.protocol] : Number(parsed.port);
  if (port === undefined) return { reason: `scheme ${parsed.protocol} is not allowed` };
  return { host: normalizeHost(parsed.hostname), port };
}

/** Why a host may not be used before any DNS, or undefined. Pure. */
export function hostReason(allow: AllowList, host: string, port: number): string | undefined {
  if (isAllowListed(allow, host, port)) return undefined;
  const name = normalizeHost(host);
  if (name === '') return 'empty host';
  if (isIpLiteral(name)) return blockedAddressReason(name);
  if (BLOCKED_NAMES.has(name) || BLOCKED_SUFFIXES.some((suffix) => name.endsWith(suffix))) return `host name ${name} is internal`;
  return undefined;
}

/**
 * Judges everything a host name resolved to: refused if ANY address is not public (a name that
 * resolves to a public and a private address would let the browser pick the private one). An
 * address that is itself allow-listed (an IP entry, with its port if it has one) is tolerated: the
 * literal would be allowed anyway. Pure.
 *
 * The refusal reaches the customer, so it names neither the address nor its range: "mongodb
 * resolves to 172.18.0.3" mapped our network for whoever asked for http://mongodb/.
 */
export function judgeAddresses(allow: AllowList, target: Target, addresses: readonly ResolvedAddress[]): Verdict {
  if (addresses.length === 0) return { allowed: false, reason: `${target.host} did not resolve` };
  if (isAllowListed(allow, target.host, target.port)) return { allowed: true, addresses };
  for (const { address } of addresses) {
    if (!isAllowListed(allow, address, target.port) && blockedAddressReason(address) !== undefined)
      return { allowed: false, reason: internalHostReason(target.host) };
  }
  return { allowed: true, addresses };
}

/** Why a host name whose address is not public is refused, in words safe to hand to the customer. */
export const internalHostReason = (host: string): string => `host ${host} is not allowed: it resolves to a private or internal address`;

export const systemLookup: Lookup = async (host) => {
  const found = await dnsLookup(host, { all: true, verbatim: true });
  return found.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};

export interface SsrfGuardOptions {
  readonly allowList: AllowList;
  /** DNS; tests substitute their own. Default: the system resolver, as the browser would use. */
  readonly lookup?: Lookup;
  readonly lookupTimeoutMs?: number;
}

/**
 * One guard per capture. Each host name is resolved once and the answer is kept for the life of the
 * guard, so every check and every connection of the capture uses the same vetted addresses: a DNS
 * server that answers "public" to the check and "169.254.169.254" to the connection (rebinding)
 * never gets its second question.
 */
export class SsrfGuard {
  readonly allowList: AllowList;
  readonly #lookup: Lookup;
  readonly #lookupTimeoutMs: number;
  readonly #resolved = new Map<string, Promise<readonly ResolvedAddress[] | string>>();

  constructor(options: SsrfGuardOptions) {
    this.allowList = options.allowList;
    this.#lookup = options.lookup ?? systemLookup;
    this.#lookupTimeoutMs = options.lookupTimeoutMs ?? 5000;
  }

  /** For a request the page makes: scheme, host name, then every address the host resolves to. */
  async checkUrl(url: string, schemes?: readonly string[]): Promise<Verdict> {
    const target = urlTarget(url, schemes);
    if ('reason' in target) return { allowed: false, reason: target.reason };
    return this.checkTarget(target);
  }

  /** For a connection: the addresses returned are the only ones it may use. */
  async checkTarget(target: Target): Promise<Verdict> {
    const early = hostReason(this.allowList, target.host, target.port);
    if (early !== undefined) return { allowed: false, reason: early };
    const host = normalizeHost(target.host);
    if (isIpLiteral(host)) return { allowed: true, addresses: [{ address: host, family: host.includes(':') ? 6 : 4 }] };
    const resolved = await this.#resolve(host);
    if (typeof resolved === 'string') return { allowed: false, reason: resolved };
    return judgeAddresses(this.allowList, { host, port: target.port }, resolved);
  }

  #resolve(host: string): Promise<readonly ResolvedAddress[] | string> {
    let pending = this.#resolved.get(host);
    if (pending === undefined) {
      pending = this.#lookupWithTimeout(host);
      this.#resolved.set(host, pending);
    }
    return pending;
  }

  async #lookupWithTimeout(host: string): Promise<readonly ResolvedAddress[] | string> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`DNS lookup of ${host} timed out`), this.#lookupTimeoutMs);
    });
    try {
      return await Promise.race([
        this.#lookup(host).catch((error: unknown) => `DNS lookup of ${host} failed: ${(error as { code?: string }).code ?? String(error)}`),
        timeout,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }
}
