import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';

/**
 * The ui-kit fixture's shop page, served from a folder (the fixture itself, or a copy with a bug put
 * in) on 127.0.0.1 at a free port: `public/` at `/`, `src/` at `/src/`, and `POST /api/cart`, whose
 * calls are recorded. Each test runs its own, so a copy's bug never leaks into another test's page.
 */

export const UI_KIT_DIR = new URL('../fixtures/ui-kit/', import.meta.url).pathname;

export interface UiKitSite {
  readonly origin: string;
  /** Bodies of the POST /api/cart requests the page made. */
  readonly cartRequests: unknown[];
  close(): Promise<void>;
}

const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css' };

export async function startUiKitSite(root: string = UI_KIT_DIR): Promise<UiKitSite> {
  const cartRequests: unknown[] = [];
  const send = (res: ServerResponse, status: number, type: string, body: string | Buffer) => {
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
    res.end(body);
  };
  const serveFile = async (res: ServerResponse, folder: string, relative: string) => {
    const base = join(root, folder);
    const file = normalize(join(base, relative));
    if (!file.startsWith(base + sep)) return send(res, 404, 'text/plain', 'not found');
    try {
      send(res, 200, TYPES[extname(file)] ?? 'application/octet-stream', await readFile(file));
    } catch {
      send(res, 404, 'text/plain', 'not found');
    }
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (req.method === 'POST' && path === '/api/cart') {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      cartRequests.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      return send(res, 200, 'application/json', '{"ok":true}');
    }
    if (path.startsWith('/src/')) return serveFile(res, 'src', path.slice('/src/'.length));
    if (path === '/') return serveFile(res, 'public', 'index.html');
    return serveFile(res, 'public', path.slice(1));
  };
  const server = createServer((req, res) => {
    handle(req, res).catch(() => send(res, 500, 'text/plain', 'error'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    cartRequests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
