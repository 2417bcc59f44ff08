import { createServer, type Server } from 'node:http';
import type { Express } from 'express';
import { onClientError } from './http/client-error.ts';
import { lingerOnClose } from './http/lingering-close.ts';
import type { LeanHandler } from './http/lean-handler.ts';
import { tracedRequests } from './tracing/http-spans.ts';
import type { Runtime } from './runtime.ts';

/** What `svc run` starts: HTTP faces, consumers, schedulers. */
export interface RunningService {
  name: string;
  url?: string;
  /** Where its back-office routes are served, when they have a listener of their own (ADMIN_PORT). */
  adminUrl?: string;
  stop(): Promise<void>;
}

export interface ServiceModule {
  name: string;
  description: string;
  start(runtime: Runtime): Promise<RunningService>;
}

/**
 * Serves the app. close() stops taking connections, lets requests in flight finish for up to
 * `drainMs`, then cuts whatever is left, so a stop always ends.
 */
export async function listen(
  app: Express,
  host: string,
  port: number,
  options: {
    drainMs?: number;
    lean?: LeanHandler;
    /**
     * The service whose requests get server spans when tracing is on. Only the requests Express
     * answers: the lean routes (POST /validate, the hot path) are never traced, so tracing costs
     * them nothing (README.md, Traces).
     */
    traceAs?: string;
  } = {},
): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const lean = options.lean;
  const handler = options.traceAs === undefined ? app : tracedRequests(options.traceAs, app);
  const server = createServer(lean ? (req, res) => void (lean(req, res) || handler(req, res)) : handler);
  server.on('clientError', onClientError);
  server.on('connection', lingerOnClose);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.keepAliveTimeout = 65_000;
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  return {
    server,
    url: `http://${shownHost}:${actualPort}`,
    close: () =>
      new Promise<void>((resolve) => {
        const cut = setTimeout(() => server.closeAllConnections(), options.drainMs ?? 5000);
        // A keep-alive connection whose request finishes during the drain goes idle afterwards;
        // close() only closes the connections idle when it is called, so keep closing them.
        const idle = setInterval(() => server.closeIdleConnections(), 50);
        server.close(() => {
          clearTimeout(cut);
          clearInterval(idle);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}
