import type { BoundedContext } from '../platform/context.ts';
import { lazyService } from '../platform/lazy-service.ts';

/** The mailer publishes nothing and keeps no read model: it turns other contexts' events into e-mail. */
export const mailerContext: BoundedContext = {
  name: 'mailer',
  events: [],
  projections: [],
  services: [lazyService('mailer', async () => (await import('./mailer.service.ts')).mailerService)],
};
