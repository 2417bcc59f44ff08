import type { Collection, Document } from 'mongodb';

/**
 * The collection with its calls of the named methods counted: a test's way to say how many reads a
 * step made against the real database, without standing in for it.
 */
export function countedCalls(
  real: Collection<Document>,
  methods: readonly string[],
): { collection: Collection<Document>; calls: () => number } {
  let n = 0;
  const collection = new Proxy(real, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof property !== 'string' || !methods.includes(property) || typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        n++;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { collection, calls: () => n };
}
