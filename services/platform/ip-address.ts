import { isIPv4, isIPv6 } from 'node:net';

/**
 * Which IP addresses svc may connect to on a customer's behalf (a capture, a team's SSO provider): pure, no I/O. `blockedAddressReason` answers undefined
 * for a public unicast address and a short reason for anything else. It is a deny-by-default list for
 * IPv6 (only global unicast 2000::/3 passes) and a list of special-purpose ranges for IPv4, so a range
 * that this file forgets errs towards refusing. Addresses that embed an IPv4 address (IPv4-mapped,
 * NAT64, 6to4) are judged by the address they embed, because that is where the packets end up.
 */

interface Range4 {
  readonly base: number;
  readonly bits: number;
  readonly reason: string;
}

const v4 = (dotted: string, bits: number, reason: string): Range4 => ({ base: parseIPv4(dotted), bits, reason });

// Order matters where ranges nest: the first match names the reason.
const SPECIAL_IPV4: readonly Range4[] = [
  v4('255.255.255.255', 32, 'broadcast'),
  v4('0.0.0.0', 8, 'unspecified ("this network", 0.0.0.0/8)'),
  v4('10.0.0.0', 8, 'private (10/8)'),
  v4('100.64.0.0', 10, 'carrier-grade NAT (100.64/10)'),
  v4('127.0.0.0', 8, 'loopback (127/8)'),
  v4('169.254.0.0', 16, 'link-local (169.254/16, cloud metadata)'),
  v4('172.16.0.0', 12, 'private (172.16/12)'),
  v4('192.0.0.0', 24, 'reserved (192.0.0/24, IETF protocol assignments)'),
  v4('192.0.2.0', 24, 'documentation (192.0.2/24)'),
  v4('192.88.99.0', 24, 'reserved (6to4 relay anycast)'),
  v4('192.168.0.0', 16, 'private (192.168/16)'),
  v4('198.18.0.0', 15, 'reserved (198.18/15, benchmarking)'),
  v4('198.51.100.0', 24, 'documentation (198.51.100/24)'),
  v4('203.0.113.0', 24, 'documentation (203.0.113/24)'),
  v4('224.0.0.0', 4, 'multicast (224/4)'),
  v4('240.0.0.0', 4, 'reserved (240/4)'),
];

/** Dotted-quad to an unsigned 32-bit number; throws on anything `net.isIPv4` refuses. */
export function parseIPv4(address: string): number {
  if (!isIPv4(address)) throw new TypeError(`not an IPv4 address: ${address}`);
  return address.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

const inRange4 = (n: number, range: Range4): boolean => {
  const size = 2 ** (32 - range.bits);
  return Math.floor(n / size) === Math.floor(range.base / size);
};

function reason4(n: number): string | undefined {
  return SPECIAL_IPV4.find((range) => inRange4(n, range))?.reason;
}

/** IPv6 text (with `::` and an optional dotted IPv4 tail) to its eight 16-bit words. */
export function parseIPv6(address: string): number[] {
  if (!isIPv6(address)) throw new TypeError(`not an IPv6 address: ${address}`);
  let text = address.toLowerCase();
  const lastColon = text.lastIndexOf(':');
  const last = text.slice(lastColon + 1);
  if (last.includes('.')) {
    // A dotted IPv4 tail (::ffff:10.0.0.1) is the last two words written another way.
    const n = parseIPv4(last);
    text = `${text.slice(0, lastColon + 1)}${Math.floor(n / 0x10000).toString(16)}:${(n % 0x10000).toString(16)}`;
  }
  const halves = text.split('::');
  const words = (s: string | undefined) => (s === undefined || s === '' ? [] : s.split(':').map((w) => parseInt(w, 16)));
  const left = words(halves[0]);
  const right = words(halves[1]);
  const all = halves.length === 2 ? [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right] : left;
  if (all.length !== 8) throw new TypeError(`not an IPv6 address: ${address}`);
  return all;
}

/** Whether the first `bits` bits of `words` equal those of `prefix` (given as words, zero-padded). */
function hasPrefix(words: readonly number[], prefix: readonly number[], bits: number): boolean {
  for (let i = 0; i < 8 && bits > 0; i++, bits -= 16) {
    const take = Math.min(16, bits);
    const mask = (0xffff << (16 - take)) & 0xffff;
    if (((words[i] ?? 0) & mask) !== ((prefix[i] ?? 0) & mask)) return false;
  }
  return true;
}

const embedded4 = (high: number | undefined, low: number | undefined): number => (high ?? 0) * 0x10000 + (low ?? 0);

function reason6(w: readonly number[]): string | undefined {
  if (w.every((x) => x === 0)) return 'unspecified (::)';
  if (hasPrefix(w, [0, 0, 0, 0, 0, 0, 0, 1], 128)) return 'loopback (::1)';
  if (hasPrefix(w, [0, 0, 0, 0, 0, 0xffff], 96)) {
    const inner = reason4(embedded4(w[6], w[7]));
    return inner && `IPv4-mapped ${inner}`;
  }
  if (hasPrefix(w, [0x64, 0xff9b], 96)) {
    const inner = reason4(embedded4(w[6], w[7]));
    return inner && `NAT64 ${inner}`;
  }
  if (hasPrefix(w, [0x2002], 16)) {
    const inner = reason4(embedded4(w[1], w[2]));
    return inner && `6to4 ${inner}`;
  }
  if (hasPrefix(w, [0xfc00], 7)) return 'private (unique local fc00::/7)';
  if (hasPrefix(w, [0xfe80], 10)) return 'link-local (fe80::/10)';
  if (hasPrefix(w, [0xfec0], 10)) return 'private (site-local fec0::/10)';
  if (hasPrefix(w, [0xff00], 8)) return 'multicast (ff00::/8)';
  if (hasPrefix(w, [0x2001, 0x0db8], 32)) return 'documentation (2001:db8::/32)';
  if (hasPrefix(w, [0x3fff], 20)) return 'documentation (3fff::/20)';
  if (hasPrefix(w, [0x2001], 23)) return 'reserved (2001::/23: Teredo, benchmarking, ORCHID)';
  if (!hasPrefix(w, [0x2000], 3)) return 'reserved (outside global unicast 2000::/3)';
  return undefined;
}

/**
 * Why a capture may not connect to `address`, or undefined when it may (public unicast).
 * Accepts `[v6]` brackets; an IPv6 zone (`fe80::1%eth0`) is refused outright.
 */
export function blockedAddressReason(address: string): string | undefined {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (isIPv4(bare)) return reason4(parseIPv4(bare));
  if (bare.includes('%')) return 'IPv6 address with a zone';
  if (isIPv6(bare)) return reason6(parseIPv6(bare));
  return 'not an IP address';
}

export const isIpLiteral = (host: string): boolean => {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return isIPv4(bare) || isIPv6(bare);
};
