import type { BoundedContext } from '../platform/context.ts';
import { lazyService } from '../platform/lazy-service.ts';

/** The MCP face of the vision RAG side: no events or projections of its own (the tools use rag's). */
export const mcpContext: BoundedContext = {
  name: 'mcp',
  events: [],
  projections: [],
  services: [lazyService('mcp', async () => (await import('./mcp.service.ts')).mcpService)],
};
