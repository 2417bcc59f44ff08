import { readFileSync } from 'node:fs';
import { RemoteValidator } from '../keys/remote-validator.ts';
import { Parts } from '../platform/parts.ts';
import type { ServiceModule } from '../platform/service.ts';
import { serveHttp } from '../platform/wiring.ts';
import { leaseRagEngine } from './engine.ts';
import { cors } from './http/cors.ts';
import { featuresOf, RagHealth } from './http/rag-health.ts';
import { leaseIntegrationEngine } from '../integration/engine.ts';
import { mountIntegrationRoutes } from '../integration/http/integration.routes.ts';
import { leaseVisionEngine } from '../vision/engine.ts';
import { mountGlmRoutes } from '../vision/http/glm.routes.ts';
import { GateFirst } from './http/gate-first.ts';
import { GATED_PREFIXES, gateCheckOf, mountIndexBody, mountRagRoutes } from './http/rag.routes.ts';

export const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Errors of the retrieval API carry `success: false`, as its specification shows them. */
export const ragErrorBody = (body: object): Record<string, unknown> => ({ success: false, ...body });

/**
 * The vision RAG service, part 1: code retrieval. The HTTP face on RAG_PORT (gated) over the
 * process's retrieval engine (services/rag/engine.ts: projections, indexer, index stores).
 */
export const ragService: ServiceModule = {
  name: 'rag',
  description: 'vision RAG: code retrieval (/api/rag/setup, /index, /query), page capture, analysis and visual tests (/api/glm/capture, /analyze, /test), and integration checks (/api/integration/validate, /generate, /report)',
  async start(rt) {
    const { config } = rt;
    const log = rt.log.child({ service: 'rag' });
    const parts = new Parts();
    return parts.starting(async () => {
      const lease = await leaseRagEngine(rt);
      parts.onStop(() => lease.release());
      const vision = await leaseVisionEngine(rt);
      parts.onStop(() => vision.release());
      const integration = await leaseIntegrationEngine(rt);
      parts.onStop(() => integration.release());
      const { deps } = lease.value;
      const features = featuresOf(lease.value, vision.value);
      const gate = new GateFirst({ validator: new RemoteValidator(config.authUrl), pricingUrl: config.urls.pricing, publisher: rt.publisher, errorBody: ragErrorBody });
      const health = new RagHealth({ service: 'svc-rag', health: rt.health, version: VERSION, environment: config.env, features });
      parts.onStop(() => health.stop());
      const server = await serveHttp(rt, log, {
        service: 'rag',
        port: config.ports.rag,
        healthRoute: health.mount,
        errorBody: ragErrorBody,
        beforeJson: (a) => {
          a.use('/api', cors);
          // The key is checked before any body parser, so whoever has none gets 401 without the
          // server reading (or inflating) a byte of what it sends.
          a.use(GATED_PREFIXES, gate.beforeBody(gateCheckOf));
          mountIndexBody(a, config.rag.pushBodyLimit);
        },
        mount: (a) => {
          mountRagRoutes(a, deps, gate);
          mountGlmRoutes(a, vision.value.deps, gate);
          mountIntegrationRoutes(a, integration.value, gate);
        },
      });
      parts.onStop(() => server.close());
      return { name: 'rag', url: server.url, stop: () => parts.stopAll((err) => log.error({ err }, 'stop failed')) };
    });
  },
};
