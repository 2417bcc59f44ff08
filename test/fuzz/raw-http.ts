import { connect } from 'node:net';

/**
 * HTTP/1.x over a bare socket, so that a request may be anything a client can put on the wire:
 * duplicated or missing headers, bytes no HTTP library would send, a Content-Length that lies.
 * Reads the first answer only (a lying length can make the server see a second request).
 */

/** How the body is framed on the wire. */
export type Framing =
  | 'length' // Content-Length: the body's length
  | 'chunked' // Transfer-Encoding: chunked
  | 'none' // neither header; the body bytes follow the head anyway
  | 'short' // Content-Length shorter than the body
  | 'long' // Content-Length longer than the body, then the client half-closes
  | 'both' // Content-Length and Transfer-Encoding: chunked
  | 'two-lengths'; // two different Content-Length headers

export interface RawRequest {
  method: string;
  /** The request target as sent (path and query, not checked). */
  target: string;
  version: string;
  /** In order, duplicates allowed; values are written as UTF-8 bytes. */
  headers: [string, string][];
  body: Buffer;
  framing: Framing;
}

export interface RawResponse {
  /** 0 when nothing parsable came back. */
  status: number;
  headers: [string, string][];
  /** The head and the (de-chunked) body as latin1 text: every byte kept, for searching. */
  text: string;
  body: Buffer;
  ms: number;
  /** No complete answer within the time limit, or the socket closed without one. */
  unanswered: boolean;
}

export function encodeRequest(req: RawRequest): Buffer {
  const lines: string[] = [`${req.method} ${req.target} ${req.version}`];
  for (const [name, value] of req.headers) lines.push(`${name}: ${value}`);
  let body = req.body;
  switch (req.framing) {
    case 'length':
      lines.push(`Content-Length: ${body.length}`);
      break;
    case 'chunked':
    case 'both':
      if (req.framing === 'both') lines.push(`Content-Length: ${body.length}`);
      lines.push('Transfer-Encoding: chunked');
      body = chunk(body);
      break;
    case 'short':
      lines.push(`Content-Length: ${Math.max(0, body.length - 1 - (body.length >> 2))}`);
      break;
    case 'long':
      lines.push(`Content-Length: ${body.length + 1 + (body.length >> 1)}`);
      break;
    case 'two-lengths':
      lines.push(`Content-Length: ${body.length}`, `Content-Length: ${body.length + 3}`);
      break;
    case 'none':
      break;
  }
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'utf8'), body]);
}

function chunk(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let at = 0; at < body.length; at += 4096) {
    const piece = body.subarray(at, at + 4096);
    parts.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}

interface Parsed {
  status: number;
  headers: [string, string][];
  body: Buffer;
  head: string;
}

/** The first complete answer in `data`, or undefined while more bytes are needed. */
function parse(data: Buffer, method: string, closed: boolean): Parsed | undefined {
  let start = 0;
  for (;;) {
    const end = data.indexOf('\r\n\r\n', start);
    if (end < 0) return undefined;
    const head = data.subarray(start, end).toString('latin1');
    const [statusLine = '', ...headerLines] = head.split('\r\n');
    const status = Number(/^HTTP\/\d\.\d (\d{3})/.exec(statusLine)?.[1] ?? 0);
    const headers = headerLines.map((line): [string, string] => {
      const colon = line.indexOf(':');
      return colon < 0 ? [line, ''] : [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
    });
    const rest = data.subarray(end + 4);
    // 100 Continue (and other 1xx) precede the answer.
    if (status >= 100 && status < 200) {
      start = end + 4;
      continue;
    }
    const get = (name: string) => headers.find(([n]) => n === name)?.[1];
    if (method === 'HEAD' || status === 204 || status === 304) return { status, headers, body: Buffer.alloc(0), head };
    const te = get('transfer-encoding');
    if (te && /chunked/i.test(te)) {
      const body = dechunk(rest);
      return body ? { status, headers, body, head } : closed ? { status, headers, body: rest, head } : undefined;
    }
    const length = get('content-length');
    if (length !== undefined) {
      const n = Number(length);
      if (rest.length >= n) return { status, headers, body: rest.subarray(0, n), head };
      return closed ? { status, headers, body: rest, head } : undefined;
    }
    return closed ? { status, headers, body: rest, head } : undefined;
  }
}

function dechunk(data: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at);
    if (lineEnd < 0) return undefined;
    const size = parseInt(data.subarray(at, lineEnd).toString('latin1'), 16);
    if (!Number.isFinite(size)) return undefined;
    if (size === 0) return Buffer.concat(parts);
    if (data.length < lineEnd + 2 + size + 2) return undefined;
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}

/** Sends one request on a new connection and reads its answer (or gives up after timeoutMs). */
export function send(port: number, req: RawRequest, timeoutMs = 15_000): Promise<RawResponse> {
  const bytes = encodeRequest(req);
  const started = performance.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let done = false;
    const socket = connect({ host: '127.0.0.1', port, allowHalfOpen: true });
    const finish = (parsed: Parsed | undefined) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const ms = performance.now() - started;
      if (!parsed) {
        resolve({ status: 0, headers: [], text: Buffer.concat(chunks).toString('latin1'), body: Buffer.alloc(0), ms, unanswered: true });
        return;
      }
      resolve({
        status: parsed.status,
        headers: parsed.headers,
        text: `${parsed.head}\r\n\r\n${parsed.body.toString('latin1')}`,
        body: parsed.body,
        ms,
        unanswered: false,
      });
    };
    const timer = setTimeout(() => finish(parse(Buffer.concat(chunks), req.method, true)), timeoutMs);
    socket.on('data', (data: Buffer) => {
      chunks.push(data);
      const parsed = parse(Buffer.concat(chunks), req.method, false);
      if (parsed) finish(parsed);
    });
    socket.on('end', () => finish(parse(Buffer.concat(chunks), req.method, true)));
    socket.on('close', () => finish(parse(Buffer.concat(chunks), req.method, true)));
    // A server that resets the connection after answering still answered; one that resets before did not.
    socket.on('error', () => finish(parse(Buffer.concat(chunks), req.method, true)));
    socket.write(bytes, () => {
      if (req.framing === 'long') setTimeout(() => socket.end(), 50);
    });
  });
}
