import type { KeyRecord } from './keys.projection.ts';
import { TtlCache } from './ttl-cache.ts';

/**
 * The keys projection as the hot path sees it: by key hash, at most 500 ms old, and evicted as soon
 * as keys.events or subscriptions.events mention a key, so a revoked or downgraded key is refused
 * within a second.
 */
export class KeyCache {
  private readonly cache = new TtlCache<KeyRecord | null>();
  private readonly bySubscription = new Map<string, string>();

  async get(keyHash: string, load: (hash: string) => Promise<KeyRecord | null>): Promise<KeyRecord | null> {
    const record = await this.cache.get(keyHash, load);
    if (record) this.bySubscription.set(record.subscriptionId, keyHash);
    return record;
  }

  evictKey(keyHash: string): void {
    this.cache.evict(keyHash);
  }

  evictSubscription(subscriptionId: string): void {
    const hash = this.bySubscription.get(subscriptionId);
    if (hash) this.cache.evict(hash);
  }
}
