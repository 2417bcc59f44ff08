import type { IncomingMessage } from 'node:http';
import type { Application, Express, Request } from 'express';

const MAX_ENTRIES = 10_000;

/** Per app: socket address, then X-Forwarded-For value (or ''), to the address req.ip gives. */
interface Remembered {
  entries: number;
  bySocket: Map<string, Map<string, string>>;
}
const byApp = new WeakMap<Application, Remembered>();

/**
 * req.ip, remembered per socket address and X-Forwarded-For value. Express works req.ip out
 * through proxy-addr on every read, parsing each address of the chain against the app's
 * `trust proxy` setting; on POST /validate that was about 8 % of the throughput. The answer depends
 * only on those two strings and the app's setting, so a small per-app map gives the same address
 * without the work. An unbounded variety of headers only makes the map start over.
 */
export function clientIp(req: Request): string {
  return rememberedIp(req.app, req as IncomingMessage, req);
}

/**
 * clientIp() of a plain node:http request served outside the app's router (a LeanHandler), by the
 * app's `trust proxy`. Express makes a request its own by swapping its prototype, which slows every
 * later read of it; here only a miss of the map builds an Express view of the request to ask.
 */
export function clientIpOutside(app: Application, req: IncomingMessage): string {
  return rememberedIp(app, req, undefined);
}

function rememberedIp(app: Application, req: IncomingMessage, expressReq: Request | undefined): string {
  const header = req.headers['x-forwarded-for'];
  const forwarded = typeof header === 'string' ? header : header === undefined ? '' : header.join(',');
  const socket = req.socket.remoteAddress ?? '';
  let known = byApp.get(app);
  if (!known) {
    known = { entries: 0, bySocket: new Map() };
    byApp.set(app, known);
  }
  // Two lookups rather than one by a joined key: no string built per request (issue 37).
  let chains = known.bySocket.get(socket);
  let ip = chains?.get(forwarded);
  if (ip === undefined) {
    ip = (expressReq ?? expressView(app, req)).ip ?? 'unknown';
    if (known.entries >= MAX_ENTRIES) {
      known.bySocket.clear();
      known.entries = 0;
      chains = undefined;
    }
    if (!chains) {
      chains = new Map();
      known.bySocket.set(socket, chains);
    }
    chains.set(forwarded, ip);
    known.entries++;
  }
  return ip;
}

/** What Express's req.ip reads (headers, socket, the app's settings), over a request it never saw. */
function expressView(app: Application, req: IncomingMessage): Request {
  const view = Object.create((app as Express).request as object) as Request;
  Object.defineProperties(view, { headers: { value: req.headers }, socket: { value: req.socket }, connection: { value: req.socket } });
  return view;
}

/**
 * The bucket a per-client limit counts an address in. One IPv6 subscriber usually holds a whole /64
 * (and picks a new temporary address whenever it likes), so IPv6 counts per /64; an IPv4-mapped
 * address is the IPv4 client it stands for. Anything else is counted as given.
 */
export function ipLimitKey(ip: string): string {
  if (!ip.includes(':')) return ip;
  const groups = ipv6Groups(ip);
  if (!groups) return ip;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const [hi = 0, lo = 0] = groups.slice(6);
    return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** The client's limit bucket: ipLimitKey of its address as `trust proxy` works it out. */
export const clientIpKey = (req: Request): string => ipLimitKey(clientIp(req));

/** The eight 16-bit groups of an IPv6 address (zone dropped, dotted IPv4 tail read), or null. */
function ipv6Groups(address: string): number[] | null {
  const ip = address.split('%')[0]!;
  const halves = ip.split('::');
  if (halves.length > 2) return null;
  const parse = (part: string | undefined): number[] | null => {
    if (!part) return [];
    const out: number[] = [];
    for (const piece of part.split(':')) {
      if (piece.includes('.')) {
        const octets = piece.split('.').map(Number);
        if (octets.length !== 4 || octets.some((o) => !Number.isInteger(o) || o < 0 || o > 255)) return null;
        out.push((octets[0]! << 8) | octets[1]!, (octets[2]! << 8) | octets[3]!);
      } else if (/^[0-9a-f]{1,4}$/i.test(piece)) {
        out.push(parseInt(piece, 16));
      } else {
        return null;
      }
    }
    return out;
  };
  const head = parse(halves[0]);
  const tail = parse(halves[1]);
  if (!head || !tail) return null;
  if (halves.length === 1) return head.length === 8 ? head : null;
  const missing = 8 - head.length - tail.length;
  return missing >= 1 ? [...head, ...new Array<number>(missing).fill(0), ...tail] : null;
}
