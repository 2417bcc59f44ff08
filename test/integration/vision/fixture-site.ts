import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';

/**
 * Pages for the capture tests, served on 127.0.0.1 at a free port (the only one the tests allow-list),
 * and a second loopback listener, NOT allow-listed, that counts every TCP connection it gets: a
 * blocked request must leave it at zero.
 */

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/vision/${name}`, import.meta.url), 'utf8');

export interface FixtureSite {
  readonly port: number;
  readonly origin: string;
  readonly forbiddenPort: number;
  /** TCP connections that reached the forbidden listener. */
  forbiddenConnections(): number;
  /** Host header and path of every request the site served or holds. */
  readonly requests: Array<{ readonly host: string; readonly path: string }>;
  /** Requests to /hold/* waiting now, and the most ever waiting at once. */
  held(): number;
  maxHeld(): number;
  /** Resolves once `n` requests to /hold/* are waiting. */
  whenHeld(n: number): Promise<void>;
  releaseHeld(): void;
  close(): Promise<void>;
}

export async function startFixtureSite(): Promise<FixtureSite> {
  let forbiddenConnections = 0;
  const forbiddenSockets = new Set<Socket>();
  const forbidden = createTcpServer((socket) => {
    forbiddenConnections++;
    forbiddenSockets.add(socket);
    socket.destroy();
  });
  await new Promise<void>((resolve) => forbidden.listen(0, '127.0.0.1', resolve));
  const forbiddenPort = (forbidden.address() as AddressInfo).port;

  const requests: Array<{ host: string; path: string }> = [];
  const held = new Set<ServerResponse>();
  let maxHeld = 0;
  const heldWaiters: Array<{ n: number; resolve: () => void }> = [];
  const page = (res: ServerResponse, html: string) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(html.replaceAll('{{FORBIDDEN_PORT}}', String(forbiddenPort)));
  };
  const blob = Buffer.alloc(100_000, 7);

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/';
    requests.push({ host: req.headers.host ?? '', path });
    if (path === '/basic') return page(res, fixture('basic.html'));
    if (path === '/leaky') return page(res, fixture('leaky.html'));
    if (path === '/heavy') return page(res, fixture('heavy.html'));
    // The analyses' pages; /analysis/clean-changed is clean.html with its heading changed, for visual diffs.
    if (path === '/analysis/defects') return page(res, fixture('analysis/defects.html'));
    if (path === '/analysis/clean') return page(res, fixture('analysis/clean.html'));
    if (path === '/analysis/clean-csp') {
      // No script of any origin may run: axe must still get in (page.evaluate is not subject to CSP).
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; img-src data:",
      });
      return res.end(fixture('analysis/clean.html'));
    }
    if (path === '/analysis/clean-changed')
      return page(res, fixture('analysis/clean.html').replace('<h1>Account settings</h1>', '<h1>Account preferences and billing</h1>'));
    if (path.startsWith('/blob/')) {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': blob.length, 'cache-control': 'no-store' });
      return res.end(blob);
    }
    if (path === '/tall')
      return page(res, '<title>Tall</title><body style="margin:0"><div style="height:30000px;background:linear-gradient(red,blue)"></div>');
    if (path === '/oom')
      return page(res, '<title>Greedy</title><script>const a = []; for (;;) a.push(new Array(1e6).fill(Math.random()));</script>');
    if (path === '/with-image') return page(res, '<title>Same host</title><img id="same" src="/blob/x" alt="same host">');
    if (path === '/redirect-metadata') {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
      return res.end();
    }
    if (path === '/redirect-loopback') {
      res.writeHead(302, { location: `http://127.0.0.1:${forbiddenPort}/internal-admin` });
      return res.end();
    }
    if (path === '/slow') return; // never answered: the capture's timeout must end it
    if (path.startsWith('/hold/')) {
      held.add(res);
      maxHeld = Math.max(maxHeld, held.size);
      for (const waiter of heldWaiters.filter((w) => held.size >= w.n)) {
        heldWaiters.splice(heldWaiters.indexOf(waiter), 1);
        waiter.resolve();
      }
      res.once('close', () => held.delete(res));
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found');
  };
  const server: Server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    forbiddenPort,
    forbiddenConnections: () => forbiddenConnections,
    requests,
    held: () => held.size,
    maxHeld: () => maxHeld,
    whenHeld: (n) => (held.size >= n ? Promise.resolve() : new Promise((resolve) => heldWaiters.push({ n, resolve }))),
    releaseHeld() {
      for (const res of held) {
        held.delete(res);
        page(res, '<title>Released</title><p>released</p>');
      }
    },
    async close() {
      server.closeAllConnections();
      for (const socket of forbiddenSockets) socket.destroy();
      await Promise.all([
        new Promise<void>((resolve) => server.close(() => resolve())),
        new Promise<void>((resolve) => forbidden.close(() => resolve())),
      ]);
    },
  };
}
