import { isIP } from 'node:net';

/**
 * Which peers may tell us the client's address through X-Forwarded-For, in the forms Express's
 * `trust proxy` takes: false (nobody: the socket's peer is the client), a hop count (that many
 * proxies in front of us), or addresses, CIDR ranges and proxy-addr's keywords.
 */
export type TrustProxy = false | number | readonly string[];

const KEYWORDS = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * TRUST_PROXY: `off`, a hop count, or a comma list of addresses, CIDRs and keywords. `true`/`all`
 * is refused: trusting every peer lets any client name its own address and empty every per-IP limit.
 */
export function parseTrustProxy(value: string): TrustProxy {
  const text = value.trim();
  if (/^(off|false|none|0)$/i.test(text)) return false;
  if (/^\d+$/.test(text)) {
    const hops = Number(text);
    if (hops > 32) throw new Error(`a hop count of ${hops} is not plausible (at most 32)`);
    return hops;
  }
  if (/^(on|true|all|\*)$/i.test(text))
    throw new Error("trusting every peer lets any client choose its address; give a hop count or the proxies' addresses");
  const entries = text
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x.length > 0);
  if (entries.length === 0)
    throw new Error('must be off, a hop count, or a comma list of addresses, CIDRs, loopback, linklocal, uniquelocal');
  for (const entry of entries) {
    if (KEYWORDS.has(entry)) continue;
    const [address = '', prefix, extra] = entry.split('/');
    const family = isIP(address);
    const bits = family === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits);
    if (family === 0 || !prefixOk || extra !== undefined)
      throw new Error(`"${entry}" is not an IP address, a CIDR range or loopback|linklocal|uniquelocal`);
  }
  return entries;
}
