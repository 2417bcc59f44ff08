import type { BoundedContext } from '../platform/context.ts';
import { lazyService } from '../platform/lazy-service.ts';

/**
 * Not a context of its own but the face the rag, vision and integration contexts share: no events,
 * no projections, one service. The registry lists it like a context so `svc run rag` finds it, in
 * the start order it always had (after the contexts it serves, before mcp).
 */
export const visionRagFace: BoundedContext = {
  name: 'vision-rag',
  events: [],
  projections: [],
  services: [lazyService('rag', async () => (await import('./vision-rag.service.ts')).ragService)],
};
