import type { Document } from 'mongodb';
import { isEventOf, type DeliveredEvent } from '../../events/envelope.ts';
import { ProjectionCache, sharedLoad, type ProjectionCacheOptions } from '../../events/projection-cache.ts';
import { projectedFields, type StoredDocument } from '../../events/projection.ts';
import type { KeyGenerated } from './events.ts';
import { keysProjection, recordForKey, type KeyRecord } from './keys.projection.ts';

/** How long "no such key" is believed: a key generated meanwhile drops the belief as soon as the feed shows it. */
const ABSENT_TTL_MS = 500;
const MAX_ABSENT = 50_000;

export interface KeyCacheOptions extends Omit<ProjectionCacheOptions, 'load'> {
  /** The stored keys document by its id (the subscription id). */
  loadById: (id: string) => Promise<StoredDocument<Document> | null>;
  /** The stored keys document holding this key hash, if any. */
  loadByHash: (keyHash: string) => Promise<StoredDocument<Document> | null>;
}

/**
 * The keys projection as the hot path sees it: looked up by key hash, held in memory and kept
 * current from keys.events and subscriptions.events (see ProjectionCache), so a revoked or
 * downgraded key is refused as soon as its event reaches this process.
 */
export class KeyCache {
  readonly documents: ProjectionCache<KeyRecord & Record<string, unknown>>;
  readonly #loadByHash: KeyCacheOptions['loadByHash'];
  /** Key hash -> subscription id (the document's id); a key never moves to another subscription. */
  readonly #idByHash = new Map<string, string>();
  readonly #absent = new Map<string, number>();
  readonly #loads = new Map<string, Promise<KeyRecord | null>>();

  constructor(topics: Iterable<string>, options: KeyCacheOptions) {
    const { loadById, loadByHash, ...rest } = options;
    this.documents = new ProjectionCache(keysProjection, topics, { ...rest, load: loadById });
    this.#loadByHash = loadByHash;
  }

  /** The key from memory: its record, null when known not to exist, undefined when not held. */
  peek(keyHash: string): KeyRecord | null | undefined {
    const id = this.#idByHash.get(keyHash);
    if (id !== undefined) {
      const hit = this.documents.peekView(id);
      if (hit !== undefined) return recordForKey(hit, keyHash);
    }
    const absentAt = this.#absent.get(keyHash);
    if (absentAt !== undefined) {
      if (Date.now() - absentAt < ABSENT_TTL_MS) return null;
      this.#absent.delete(keyHash);
    }
    return undefined;
  }

  /** The key from memory, else loaded; concurrent misses of one key share one load. */
  get(keyHash: string): Promise<KeyRecord | null> {
    const held = this.peek(keyHash);
    if (held !== undefined) return Promise.resolve(held);
    return sharedLoad(this.#loads, keyHash, () => this.#load(keyHash));
  }

  /** The feed's events: a key generated is no longer absent. */
  noteEvents(events: readonly DeliveredEvent[]): void {
    for (const e of events) if (isEventOf<KeyGenerated>(e, 'key.generated')) this.#absent.delete(e.data.keyHash);
  }

  async #load(keyHash: string): Promise<KeyRecord | null> {
    const stored = await this.documents.fill(() => this.#loadByHash(keyHash));
    if (!stored) {
      if (this.#absent.size >= MAX_ABSENT) this.#absent.clear();
      this.#absent.set(keyHash, Date.now());
      return null;
    }
    if (this.#idByHash.size >= this.documents.maxEntries) this.#idByHash.clear();
    this.#idByHash.set(keyHash, String(stored._id));
    return recordForKey(projectedFields<KeyRecord>(stored), keyHash);
  }
}
