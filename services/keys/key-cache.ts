import type { KeyRecord } from './keys.projection.ts';

/**
 * A small in-process cache of the keys projection in front of the hot path. Entries live at most
 * ttlMs and are evicted as soon as keys.events or subscriptions.events mention them, so a revoked
 * or downgraded key is refused within a second; the TTL also covers the race where an eviction
 * arrives before the projection has applied the same event.
 */
export class KeyCache {
  private readonly entries = new Map<string, { record: KeyRecord | null; at: number }>();
  private readonly bySubscription = new Map<string, string>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;

  constructor(options: { ttlMs?: number; maxEntries?: number } = {}) {
    this.ttlMs = options.ttlMs ?? 500;
    this.maxEntries = options.maxEntries ?? 50_000;
  }

  async get(keyHash: string, load: (hash: string) => Promise<KeyRecord | null>): Promise<KeyRecord | null> {
    const hit = this.entries.get(keyHash);
    if (hit && Date.now() - hit.at < this.ttlMs) return hit.record;
    const record = await load(keyHash);
    if (this.entries.size >= this.maxEntries) {
      // Maps iterate in insertion order: drop the oldest entry.
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.delete(keyHash);
    this.entries.set(keyHash, { record, at: Date.now() });
    if (record) this.bySubscription.set(record.subscriptionId, keyHash);
    return record;
  }

  evictKey(keyHash: string): void {
    this.entries.delete(keyHash);
  }

  evictSubscription(subscriptionId: string): void {
    const hash = this.bySubscription.get(subscriptionId);
    if (hash) this.entries.delete(hash);
  }
}
