import { expect } from 'chai';
import { EventCatalog } from '../../../events/catalog.ts';
import { CONTEXTS, EVENT_DEFINITIONS, PROJECTIONS, SERVICES } from '../../../app/registry.ts';
import { lazyService } from '../../../services/platform/lazy-service.ts';
import type { ServiceModule } from '../../../services/platform/service.ts';

describe('the registry of bounded contexts (unit)', () => {
  it('builds a catalog in which every event type is defined once, with its schema files', () => {
    const catalog = new EventCatalog(EVENT_DEFINITIONS);
    expect(catalog.types()).to.have.length(EVENT_DEFINITIONS.length);
  });

  it('has every event type a projection handles in the catalog, so nothing is consumed that nobody defines', () => {
    const defined = new Set(EVENT_DEFINITIONS.map((d) => d.type));
    const missing = PROJECTIONS.flatMap((p) => p.handles.filter((t) => !defined.has(t)).map((t) => `${p.name}: ${t}`));
    expect(missing).to.deep.equal([]);
  });

  it('names each service and projection once, and starts the services in context order', () => {
    const names = SERVICES.map((s) => s.name);
    expect(new Set(names).size).to.equal(names.length);
    expect(new Set(PROJECTIONS.map((p) => p.name)).size).to.equal(PROJECTIONS.length);
    expect(names).to.deep.equal(CONTEXTS.flatMap((c) => c.services.map((s) => s.name)));
    expect(names).to.deep.equal(['accounts', 'keys', 'webhooks', 'billing', 'mailer', 'indexer', 'rag', 'mcp', 'console']);
  });

  it('loads, for each service it names, the module of that name', async function () {
    // Imports every service's code (the vision and MCP faces' libraries too): seconds on a busy machine.
    this.timeout(60_000);
    const loaded = await Promise.all(SERVICES.map(async (s) => (await s.load()).name));
    expect(loaded).to.deep.equal(SERVICES.map((s) => s.name));
  });

  it('refuses to start a service whose module answers to another name', async () => {
    const other: ServiceModule = { name: 'billing', description: 'not keys', start: () => Promise.reject(new Error('must not start')) };
    const entry = lazyService('keys', () => Promise.resolve(other));
    const refused = await entry.start({} as never).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).to.be.instanceOf(Error).with.property('message', 'the registry\'s service "keys" loaded the module of "billing"');
  });
});
