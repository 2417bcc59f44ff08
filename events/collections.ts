import type { Collection, Db, Document } from 'mongodb';

/**
 * A projection has a logical name and a physical collection. Replay swaps a rebuilt collection in
 * with renameCollection where the server supports replacing a target (MongoDB); where it does not
 * (FerretDB 1.x), an alias document points the logical name at the rebuilt collection, and readers
 * and writers follow it.
 */
export const ALIASES = 'projection_aliases';

/** How stale a resolved alias may be; replay waits twice this before relying on every reader having moved. */
export const ALIAS_TTL_MS = 500;

interface Cached {
  physical: string;
  at: number;
}

const cache = new Map<string, Cached>();
const cacheKey = (db: Db, logical: string) => `${db.databaseName}\u0000${logical}`;

export async function physicalName(db: Db, logical: string, { fresh = false } = {}): Promise<string> {
  const key = cacheKey(db, logical);
  const hit = cache.get(key);
  if (!fresh && hit && Date.now() - hit.at < ALIAS_TTL_MS) return hit.physical;
  const alias = await db.collection<{ _id: string; collection: string }>(ALIASES).findOne({ _id: logical });
  const physical = alias?.collection ?? logical;
  cache.set(key, { physical, at: Date.now() });
  return physical;
}

export async function projectionCollection<T extends Document = Document>(db: Db, logical: string): Promise<Collection<T>> {
  return db.collection<T>(await physicalName(db, logical));
}

export interface Swap {
  mode: 'rename' | 'alias';
  /** Drops what the swap replaced, once no reader can still be looking at it. */
  retire(): Promise<void>;
}

const UNSUPPORTED = new Set([59 /* CommandNotFound */, 115 /* CommandNotSupported */, 238 /* NotImplemented */]);

export async function swapIn(db: Db, logical: string, shadow: string): Promise<Swap> {
  const previous = await physicalName(db, logical, { fresh: true });
  if (previous === logical) {
    try {
      await db.admin().command({ renameCollection: `${db.databaseName}.${shadow}`, to: `${db.databaseName}.${logical}`, dropTarget: true });
      cache.delete(cacheKey(db, logical));
      return { mode: 'rename', retire: async () => undefined };
    } catch (err) {
      if (!UNSUPPORTED.has((err as { code?: number }).code ?? -1)) throw err;
    }
  }
  await db
    .collection<{ _id: string; collection: string; swappedAt: Date }>(ALIASES)
    .updateOne({ _id: logical }, { $set: { collection: shadow, swappedAt: new Date() } }, { upsert: true });
  cache.delete(cacheKey(db, logical));
  return {
    mode: 'alias',
    retire: async () => {
      if (previous !== shadow)
        await db
          .collection(previous)
          .drop()
          .catch(() => undefined);
    },
  };
}
