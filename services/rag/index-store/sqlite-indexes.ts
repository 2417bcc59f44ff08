import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { TransientError } from '../../../events/errors.ts';
import type { Logger } from '../../platform/logger.ts';
import type { CollectionIndex, CollectionIndexes } from './collection-index.ts';
import { ModelMismatchError, SchemaMismatchError, StoreBusyError } from './errors.ts';
import { sqliteIndex } from './sqlite-index.ts';
import { IndexStore } from './store.ts';
import type { ModelIdentity } from './types.ts';

/** Another process (the rag service, or a `svc rag` command) holds the collection's index file. */
export class IndexHeldError extends TransientError {
  constructor(collectionId: string, cause: unknown) {
    super(`collection ${collectionId}'s index is held by another process (the rag service?): stop it, or use the HTTP API`, { cause });
    this.name = 'IndexHeldError';
  }
}

/**
 * One SQLite file per collection in `dataDir`, held open by this process alone (the file is locked):
 * at most `openIndexes` stay open, the least recently used one not being written is closed first.
 */
export class SqliteIndexes implements CollectionIndexes {
  readonly #dataDir: string;
  readonly #openIndexes: number;
  readonly #log: Logger;
  /** Open stores, least recently used first; those being written are pinned open. */
  readonly #stores = new Map<string, { store: IndexStore; index: CollectionIndex }>();
  readonly #pinned = new Map<string, number>();

  constructor(options: { dataDir: string; openIndexes?: number; log: Logger }) {
    this.#dataDir = options.dataDir;
    this.#openIndexes = options.openIndexes ?? Infinity;
    this.#log = options.log;
    mkdirSync(options.dataDir, { recursive: true });
  }

  async open(collectionId: string, model: ModelIdentity): Promise<CollectionIndex> {
    const open = this.#stores.get(collectionId);
    if (open && !open.store.closed) {
      this.#stores.delete(collectionId);
      this.#stores.set(collectionId, open);
      return open.index;
    }
    let store: IndexStore;
    try {
      store = IndexStore.open(this.#file(collectionId), { model });
    } catch (err) {
      if (err instanceof StoreBusyError) throw new IndexHeldError(collectionId, err);
      // Made by another model or schema: derived data, so it is rebuilt from the sources.
      if (!(err instanceof ModelMismatchError || err instanceof SchemaMismatchError)) throw err;
      this.#log.warn({ collectionId, err: (err as Error).message }, 'index made by another model or schema: starting it again');
      IndexStore.remove(this.#file(collectionId));
      store = IndexStore.open(this.#file(collectionId), { model });
    }
    const entry = { store, index: sqliteIndex(store) };
    this.#stores.set(collectionId, entry);
    this.#evict();
    return entry.index;
  }

  pin(collectionId: string, by: 1 | -1): void {
    const n = (this.#pinned.get(collectionId) ?? 0) + by;
    if (n > 0) this.#pinned.set(collectionId, n);
    else this.#pinned.delete(collectionId);
  }

  async drop(collectionId: string): Promise<void> {
    this.#stores.get(collectionId)?.store.close();
    this.#stores.delete(collectionId);
    IndexStore.remove(this.#file(collectionId));
  }

  async close(): Promise<void> {
    for (const { store } of this.#stores.values()) store.close();
    this.#stores.clear();
  }

  /** The files are this process's own: nothing outside it to wait for. */
  readinessChecks(): Record<string, () => Promise<void>> {
    return {};
  }

  /** Closes the least recently used stores past the bound, never one being written. */
  #evict(): void {
    for (const [id, { store }] of this.#stores) {
      if (this.#stores.size <= this.#openIndexes) return;
      if (this.#pinned.has(id)) continue;
      store.close();
      this.#stores.delete(id);
    }
  }

  #file(collectionId: string): string {
    return join(this.#dataDir, `${collectionId}.sqlite`);
  }
}
