import type { Runtime } from './runtime.ts';

export interface Lease<T> {
  value: T;
  /** The last holder to release it stops it. */
  release(): Promise<void>;
}

interface Shared<T> {
  users: number;
  started: Promise<{ value: T; stop: () => Promise<void> }>;
}

/**
 * One instance of something per process runtime, shared by every service of the process that
 * leases it (the retrieval engine, the browser pool): the first lease starts it, the last release
 * stops it. For what a process may hold only once (an index file's lock) or should hold only once
 * (a browser).
 */
export function sharedPerRuntime<T>(
  start: (rt: Runtime) => Promise<{ value: T; stop: () => Promise<void> }>,
): (rt: Runtime) => Promise<Lease<T>> {
  const instances = new WeakMap<Runtime, Shared<T>>();
  return async (rt) => {
    let shared = instances.get(rt);
    if (!shared) {
      const created: Shared<T> = { users: 0, started: start(rt) };
      instances.set(rt, created);
      created.started.catch(() => instances.delete(rt));
      shared = created;
    }
    const owner = shared;
    const { value, stop } = await owner.started;
    owner.users++;
    let released = false;
    return {
      value,
      async release() {
        if (released) return;
        released = true;
        if (--owner.users > 0) return;
        instances.delete(rt);
        await stop();
      },
    };
  };
}
