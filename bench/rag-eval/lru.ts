/**
 * The result cache a caller puts in front of the index: least recently used entries go first. The
 * bench keys it on (store generation, query, k), as the query path should, so the cached latency it
 * reports is that of a real lookup.
 */
export class LruCache<V> {
  readonly #capacity: number;
  readonly #entries = new Map<string, V>();

  constructor(capacity: number) {
    if (!(capacity >= 1)) throw new RangeError(`capacity must be >= 1, got ${capacity}`);
    this.#capacity = capacity;
  }

  static key(generation: number, query: string, k: number): string {
    return `${generation}\u0000${k}\u0000${query}`;
  }

  get(key: string): V | undefined {
    const value = this.#entries.get(key);
    if (value === undefined) return undefined;
    // Map keeps insertion order: re-inserting makes the entry the most recent.
    this.#entries.delete(key);
    this.#entries.set(key, value);
    return value;
  }

  set(key: string, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.#capacity) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
  }

  get size(): number {
    return this.#entries.size;
  }
}
