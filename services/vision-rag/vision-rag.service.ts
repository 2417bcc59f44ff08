import { RemoteValidator } from '../keys/remote-validator.ts';
import { elementCodeLinker } from '../integration/code/element-code.ts';
import { leaseIntegrationEngine } from '../integration/engine.ts';
import { mountIntegrationRoutes } from '../integration/http/integration.routes.ts';
import { Parts } from '../platform/parts.ts';
import type { ServiceModule } from '../platform/service.ts';
import { VERSION } from '../platform/version.ts';
import { serveHttp } from '../platform/wiring.ts';
import { API_PATHS } from '../premium/api-paths.ts';
import { GateFirst } from '../premium/gate-first.ts';
import { featuresOf, RagHealth } from '../premium/health.ts';
import { leaseRagEngine } from '../rag/engine.ts';
import { gateCheckOf, mountIndexBody, mountRagRoutes } from '../rag/http/rag.routes.ts';
import { mountMemoryRoutes } from '../rag/memory/memory.routes.ts';
import { leaseVisionEngine } from '../vision/engine.ts';
import { mountGlmRoutes } from '../vision/http/glm.routes.ts';
import { cors } from './cors.ts';
import { visionRagApi } from './vision-rag.api.ts';

/** Every gated operation of the face lives under these (GET /api, the list of them, is open). */
export const GATED_PREFIXES = ['/api/rag', '/api/glm', '/api/integration', '/api/memory'];

/** Errors of the retrieval API carry `success: false`, as its specification shows them. */
export const ragErrorBody = (body: object): Record<string, unknown> => ({ success: false, ...body });

/**
 * The vision RAG service: one HTTP face on RAG_PORT (gated) over three contexts' engines, code
 * retrieval (services/rag), page capture, analysis and visual tests (services/vision) and
 * integration checks (services/integration). It belongs to none of them; its service name stays
 * 'rag', as `svc run rag` and the deployments know it.
 */
export const ragService: ServiceModule = {
  name: 'rag',
  description:
    'vision RAG: code retrieval (/api/rag/setup, /index, /query), page capture, analysis and visual tests (/api/glm/capture, /analyze, /test), and integration checks (/api/integration/validate, /generate, /report)',
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
      const gate = new GateFirst({
        validator: new RemoteValidator(config.authUrl),
        pricingUrl: config.urls.pricing,
        publisher: rt.publisher,
        errorBody: ragErrorBody,
      });
      const health = new RagHealth({ service: 'svc-rag', health: rt.health, version: VERSION, environment: config.env, features });
      parts.onStop(() => health.stop());
      const server = await serveHttp(rt, log, {
        service: 'rag',
        port: config.ports.rag,
        healthRoute: health.mount,
        errorBody: ragErrorBody,
        api: visionRagApi,
        beforeJson: (a) => {
          a.use('/api', cors);
          // The key is checked before any body parser, so whoever has none gets 401 without the
          // server reading (or inflating) a byte of what it sends.
          a.use(GATED_PREFIXES, gate.beforeBody(gateCheckOf));
          mountIndexBody(a, config.rag.pushBodyLimit);
        },
        mount: (a) => {
          a.get('/api', (_req, res) => {
            res.json(API_PATHS);
          });
          mountRagRoutes(a, deps, gate);
          mountMemoryRoutes(a, deps, gate);
          mountGlmRoutes(a, { ...vision.value.deps, codeLinker: elementCodeLinker(deps) }, gate);
          mountIntegrationRoutes(a, integration.value, gate);
        },
      });
      parts.onStop(() => server.close());
      return { name: 'rag', url: server.url, stop: () => parts.stopAll((err) => log.error({ err }, 'stop failed')) };
    });
  },
};
