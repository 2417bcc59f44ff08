import { KeyGate } from '../keys/gate.ts';
import { RemoteValidator } from '../keys/remote-validator.ts';
import { Parts } from '../platform/parts.ts';
import type { ServiceModule } from '../platform/service.ts';
import { serveHttp } from '../platform/wiring.ts';
import { leaseRagEngine } from '../rag/engine.ts';
import { featuresOf, RagHealth } from '../premium/health.ts';
import { callerOf } from '../premium/gated-request.ts';
import { elementCodeLinker } from '../integration/code/element-code.ts';
import { leaseIntegrationEngine } from '../integration/engine.ts';
import { leaseVisionEngine } from '../vision/engine.ts';
import { VERSION } from '../platform/version.ts';
import { mcpApi } from './http/mcp.api.ts';
import { MCP_PATH, mountMcp } from './http/mcp.routes.ts';
import { buildMcpServer } from './mcp-server.ts';
import { ResourceServer } from './http/oauth-resource.ts';

/**
 * The vision RAG operations as MCP tools (Streamable HTTP at /mcp on MCP_PORT), behind the same
 * key gate as the HTTP API, over the same engine: the tools call the application code the HTTP face
 * calls, so they publish the same events and use the same quotas.
 */
export const mcpService: ServiceModule = {
  name: 'mcp',
  description: 'MCP server: the vision RAG operations as tools (Streamable HTTP at /mcp, gated by X-API-Key)',
  async start(rt) {
    const { config } = rt;
    const log = rt.log.child({ service: 'mcp' });
    const parts = new Parts();
    return parts.starting(async () => {
      const lease = await leaseRagEngine(rt);
      parts.onStop(() => lease.release());
      const engine = lease.value;
      const visionLease = await leaseVisionEngine(rt);
      parts.onStop(() => visionLease.release());
      // Analyses trace their findings to the caller's code in this face too.
      const vision = { ...visionLease.value, deps: { ...visionLease.value.deps, codeLinker: elementCodeLinker(engine.deps) } };
      const integrationLease = await leaseIntegrationEngine(rt);
      parts.onStop(() => integrationLease.release());
      const features = featuresOf(engine, vision);
      const gate = new KeyGate({
        validator: new RemoteValidator(config.authUrl),
        pricingUrl: config.urls.pricing,
        publisher: rt.publisher,
      });
      const health = new RagHealth({ service: 'svc-mcp', health: rt.health, version: VERSION, environment: config.env, features });
      parts.onStop(() => health.stop());
      // Assistants connecting by the MCP authorization spec: tokens of the accounts face's authorization server.
      const resourceServer = new ResourceServer({
        resource: config.publicMcpUrl,
        issuer: config.sso.publicAccountsUrl,
        accountsUrl: config.console.accountsUrl,
        keyEncryptionKey: config.secrets.keyEncryptionKey,
        allowInsecureIssuer: config.env !== 'production',
      });
      let mcp: { close(): Promise<void> } | undefined;
      // Stopped after the server has drained its requests (parts stop newest first).
      parts.onStop(() => mcp?.close());
      const server = await serveHttp(rt, log, {
        service: 'mcp',
        port: config.ports.mcp,
        healthRoute: health.mount,
        api: mcpApi,
        beforeJson: (app) => {
          resourceServer.mount(app);
          mcp = mountMcp(app, {
            gate,
            resourceServer,
            bodyLimit: config.rag.pushBodyLimit,
            log,
            serverFor: (admitted, correlationId) =>
              buildMcpServer({
                engine,
                vision,
                integration: integrationLease.value,
                caller: callerOf(admitted),
                identity: admitted.identity,
                correlationId,
                health,
                log,
              }),
          });
        },
        mount: () => undefined,
      });
      parts.onStop(() => server.close());
      return { name: 'mcp', url: `${server.url}${MCP_PATH}`, stop: () => parts.stopAll((err) => log.error({ err }, 'stop failed')) };
    });
  },
};
