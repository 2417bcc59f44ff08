import { Parts } from '../platform/parts.ts';
import type { ServiceModule } from '../platform/service.ts';
import { serveHttp } from '../platform/wiring.ts';
import { mountConsoleRoutes, securityHeaders } from './console.routes.ts';
import { upstream } from './upstream.ts';

/**
 * The customer console on CONSOLE_PORT: server-rendered pages over the routes a customer's code
 * calls (accounts, keys, billing's checkout, rag). It holds no state: the session and the
 * connected key live in the customer's cookies (services/console/README.md).
 */
export const consoleService: ServiceModule = {
  name: 'console',
  description: 'the customer console: sign up, pricing and checkout, account, keys, usage, collections (HTML on CONSOLE_PORT)',
  async start(rt) {
    const { config } = rt;
    const log = rt.log.child({ service: 'console' });
    const secret = config.console.secret;
    if (secret === null) throw new Error('console: CONSOLE_SECRET is required when NODE_ENV=production (at least 32 bytes)');
    const parts = new Parts();
    return parts.starting(async () => {
      const server = await serveHttp(rt, log, {
        service: 'console',
        port: config.ports.console,
        // The console reads nothing of Kafka or MongoDB: its readiness is the process's own.
        dependencies: {},
        beforeJson: (a) => {
          a.use(securityHeaders);
        },
        mount: (a) =>
          mountConsoleRoutes(a, {
            secret,
            api: upstream(config.console),
            graceSeconds: config.keyRotationGraceSeconds,
            accountsPublicUrl: config.sso.publicAccountsUrl,
            log,
          }),
      });
      parts.onStop(() => server.close());
      return { name: 'console', url: server.url, stop: () => parts.stopAll((err) => log.error({ err }, 'stop failed')) };
    });
  },
};
