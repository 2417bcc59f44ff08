import { createServer, connect, type Server, type Socket } from 'node:net';
import type { ByteBudget } from './byte-budget.ts';
import { targetKey, type ResolvedAddress, type SsrfGuard } from './ssrf-guard.ts';
import { within } from './time-bounds.ts';

/**
 * The connection layer of the SSRF defence: a SOCKS5 proxy on 127.0.0.1, one per capture, through
 * which its browser context makes every TCP connection (http, https, ws, wss, preconnects, workers).
 * Chromium hands SOCKS5 the host NAME, so the browser never resolves a customer's host itself; the
 * proxy asks the capture's guard (one DNS answer per name per capture) and connects to exactly the
 * vetted address. It also counts the bytes received, which is the page weight.
 */

export interface SocksProxyOptions {
  readonly guard: SsrfGuard;
  readonly budget: ByteBudget;
  /** A connection the guard refused (or that came after the page weight was spent); target is targetKey(). */
  readonly onBlocked: (target: string, reason: string) => void;
  readonly connectTimeoutMs?: number;
}

const REPLY = { ok: 0, failure: 1, notAllowed: 2, hostUnreachable: 4, refused: 5, commandNotSupported: 7, addressNotSupported: 8 } as const;

/** SOCKS5 reply with a zero bound address: Chromium does not use it. */
const reply = (code: number): Buffer => Buffer.from([5, code, 0, 1, 0, 0, 0, 0, 0, 0]);

interface ConnectRequest {
  readonly host: string;
  readonly port: number;
  /** Bytes after the request (none from Chromium, which waits for the reply). */
  readonly rest: Buffer;
}

type Parsed<T> = T | 'more' | { readonly error: number };

/** Greeting: VER=5, NMETHODS, METHODS. Only "no authentication" (0) is offered back. */
function parseGreeting(buf: Buffer): Parsed<number> {
  if (buf.length < 2) return 'more';
  if (buf[0] !== 5) return { error: REPLY.failure };
  const length = 2 + (buf[1] ?? 0);
  if (buf.length < length) return 'more';
  return buf.subarray(2, length).includes(0) ? length : { error: 0xff };
}

/** Request: VER=5, CMD, RSV, ATYP, DST.ADDR, DST.PORT. Only CONNECT (1). */
function parseRequest(buf: Buffer): Parsed<ConnectRequest> {
  if (buf.length < 5) return 'more';
  if (buf[0] !== 5) return { error: REPLY.failure };
  if (buf[1] !== 1) return { error: REPLY.commandNotSupported };
  const type = buf[3];
  const addressLength = type === 1 ? 4 : type === 4 ? 16 : type === 3 ? 1 + (buf[4] ?? 0) : -1;
  if (addressLength < 0) return { error: REPLY.addressNotSupported };
  const end = 4 + addressLength + 2;
  if (buf.length < end) return 'more';
  const raw = buf.subarray(4, 4 + addressLength);
  const host =
    type === 1
      ? [...raw].join('.')
      : type === 4
        ? Array.from({ length: 8 }, (_, i) => raw.readUInt16BE(i * 2).toString(16)).join(':')
        : raw.subarray(1).toString('latin1');
  return { host, port: buf.readUInt16BE(4 + addressLength), rest: buf.subarray(end) };
}

export class SocksProxy {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  readonly #options: SocksProxyOptions;
  #port = 0;

  private constructor(options: SocksProxyOptions) {
    this.#options = options;
    this.#server = createServer((socket) => this.#accept(socket));
    options.budget.onExceeded(() => {
      for (const socket of this.#sockets) socket.destroy();
    });
  }

  static async start(options: SocksProxyOptions): Promise<SocksProxy> {
    const proxy = new SocksProxy(options);
    await new Promise<void>((resolve, reject) => {
      proxy.#server.once('error', reject);
      proxy.#server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = proxy.#server.address();
    if (address === null || typeof address === 'string') throw new Error('proxy has no TCP address');
    proxy.#port = address.port;
    return proxy;
  }

  /** For Playwright's per-context `proxy.server`. */
  get url(): string {
    return `socks5://127.0.0.1:${this.#port}`;
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    for (const socket of this.#sockets) socket.destroy();
    await within(closed, 1000);
  }

  #track(socket: Socket): void {
    this.#sockets.add(socket);
    socket.once('close', () => this.#sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  }

  #accept(client: Socket): void {
    this.#track(client);
    let buf = Buffer.alloc(0);
    let stage: 'greeting' | 'request' | 'busy' = 'greeting';
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (buf.length > 1024) return client.destroy(); // no SOCKS5 handshake is this long
      if (stage === 'greeting') {
        const greeting = parseGreeting(buf);
        if (greeting === 'more') return;
        if (typeof greeting !== 'number') return void client.end(Buffer.from([5, greeting.error]));
        client.write(Buffer.from([5, 0]));
        buf = buf.subarray(greeting);
        stage = 'request';
      }
      if (stage === 'request') {
        const request = parseRequest(buf);
        if (request === 'more') return;
        if ('error' in request) return void client.end(reply(request.error));
        stage = 'busy';
        client.off('data', onData);
        client.pause();
        void this.#open(client, request);
      }
    };
    client.on('data', onData);
  }

  async #open(client: Socket, request: ConnectRequest): Promise<void> {
    const { guard, budget, onBlocked } = this.#options;
    const target = targetKey(request.host, request.port);
    if (budget.exceeded) {
      onBlocked(target, 'page weight limit reached');
      return void client.end(reply(REPLY.notAllowed));
    }
    const verdict = await guard.checkTarget({ host: request.host, port: request.port });
    if (client.destroyed) return;
    if (!verdict.allowed) {
      onBlocked(target, verdict.reason);
      return void client.end(reply(REPLY.notAllowed));
    }
    const upstream = await this.#connect(verdict.addresses, request.port);
    if (upstream === undefined) return void client.end(reply(REPLY.hostUnreachable));
    if (client.destroyed) return void upstream.destroy();
    this.#track(upstream);
    client.write(reply(REPLY.ok));
    if (request.rest.length > 0) upstream.write(request.rest);
    upstream.on('data', (chunk: Buffer) => {
      if (!budget.add(chunk.length)) {
        upstream.destroy();
        client.destroy();
      }
    });
    upstream.pipe(client);
    client.pipe(upstream);
    client.resume();
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  }

  /** Tries each vetted address in turn; never resolves the name again. */
  async #connect(addresses: readonly ResolvedAddress[], port: number): Promise<Socket | undefined> {
    for (const { address } of addresses) {
      const socket = await new Promise<Socket | undefined>((resolve) => {
        const attempt = connect({ host: address, port });
        attempt.setTimeout(this.#options.connectTimeoutMs ?? 10_000, () => attempt.destroy());
        attempt.once('connect', () => {
          attempt.setTimeout(0);
          resolve(attempt);
        });
        attempt.once('error', () => resolve(undefined));
        attempt.once('close', () => resolve(undefined));
      });
      if (socket !== undefined) return socket;
    }
    return undefined;
  }
}
