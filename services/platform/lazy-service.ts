import type { Runtime } from './runtime.ts';
import type { RunningService, ServiceModule } from './service.ts';

/** What `svc run` needs of a service before it starts it: its name, and how to start it. */
export interface ServiceEntry {
  readonly name: string;
  start(runtime: Runtime): Promise<RunningService>;
  /** The service's module, imported on first call. */
  load(): Promise<ServiceModule>;
}

/**
 * A service known by name whose code is imported only when it starts. The registry lists every
 * context, so a context that imported its service's code put every service's code (the vision and
 * MCP faces', with their libraries) in the heap of every process, whichever service it ran: 85 MB
 * where `svc run keys` needs 32, and each full collection marks all of it (docs/benchmarks.md).
 */
export function lazyService(name: string, load: () => Promise<ServiceModule>): ServiceEntry {
  const loadChecked = async (): Promise<ServiceModule> => {
    const module = await load();
    if (module.name !== name) throw new Error(`the registry's service "${name}" loaded the module of "${module.name}"`);
    return module;
  };
  return {
    name,
    load: loadChecked,
    start: async (runtime) => (await loadChecked()).start(runtime),
  };
}
