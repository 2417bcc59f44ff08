/** A bounded map that forgets the least recently used entry first (a Map iterates in insertion order). */
export class LruCache<K, V> {
  readonly #max: number;
  readonly #entries = new Map<K, V>();

  constructor(maxEntries: number) {
    this.#max = Math.max(0, maxEntries);
  }

  get(key: K): V | undefined {
    const value = this.#entries.get(key);
    if (value === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, value);
    return value;
  }

  set(key: K, value: V): void {
    if (this.#max === 0) return;
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value as K);
  }

  get size(): number {
    return this.#entries.size;
  }
}
