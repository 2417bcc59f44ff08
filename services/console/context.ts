import type { BoundedContext } from '../platform/context.ts';
import { lazyService } from '../platform/lazy-service.ts';

/**
 * The customer console: a face like vision-rag (no events, no projections, one service), listed in
 * the registry so `svc run console` and `svc start` find it. It starts last: it calls the others.
 */
export const consoleFace: BoundedContext = {
  name: 'console',
  events: [],
  projections: [],
  services: [lazyService('console', async () => (await import('./console.service.ts')).consoleService)],
};
