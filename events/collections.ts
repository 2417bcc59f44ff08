import type { Collection, Db, Document } from 'mongodb';
import { appliedHere } from './applied-here.ts';

/**
 * A projection has a logical name and a physical collection. Replay swaps a rebuilt collection in
 * with renameCollection where the server supports replacing a target (MongoDB); where it does not
 * (FerretDB 1.x), an alias document points the logical name at the rebuilt collection, and readers
 * and writers follow it.
 */
export const ALIASES = 'projection_aliases';

/** How stale a resolved alias may be; replay waits twice this before relying on every reader having moved. */
export const ALIAS_TTL_MS = 500;

/** Every alias of one database, as read at `at` (when the read began, so staleness is never understated). */
interface Aliases {
  byLogical: ReadonlyMap<string, string>;
  at: number;
}

const cache = new Map<string, Aliases>();
const reading = new Map<string, Promise<Aliases>>();

/**
 * The collection a projection's logical name points at now, at most ALIAS_TTL_MS stale. Every alias
 * of the database is read at once, and concurrent readers share that read: a process resolving its
 * projections' names costs one small read per interval, not one per name (issue 37).
 */
export async function physicalName(db: Db, logical: string, { fresh = false } = {}): Promise<string> {
  const aliases = await aliasesOf(db, fresh);
  return aliases.byLogical.get(logical) ?? logical;
}

function aliasesOf(db: Db, fresh: boolean): Promise<Aliases> {
  const key = db.databaseName;
  const hit = cache.get(key);
  if (!fresh && hit && Date.now() - hit.at < ALIAS_TTL_MS) return Promise.resolve(hit);
  // A fresh read (a swap about to be made) never joins one that began before it was asked for.
  const inFlight = fresh ? undefined : reading.get(key);
  if (inFlight) return inFlight;
  const at = Date.now();
  const read = db
    .collection<{ _id: string; collection: string }>(ALIASES)
    .find({}, { projection: { collection: 1 } })
    .toArray()
    .then((docs) => {
      const aliases: Aliases = { byLogical: new Map(docs.map((d) => [d._id, d.collection])), at };
      const known = cache.get(key);
      // A read that began earlier and ended later never replaces a newer one.
      if (!known || known.at <= at) cache.set(key, aliases);
      return aliases;
    })
    .finally(() => {
      if (reading.get(key) === read) reading.delete(key);
    });
  if (!fresh) reading.set(key, read);
  return read;
}

/** After a swap: the next resolution reads afresh, and joins no read that began before it. */
function forgetAliases(db: Db): void {
  cache.delete(db.databaseName);
  reading.delete(db.databaseName);
  // A rename puts the rebuilt collection under the name the old one had: what this process applied
  // to the old one says nothing about the new one (its replay applies those events again).
  appliedHere.forget();
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
      forgetAliases(db);
      return { mode: 'rename', retire: async () => undefined };
    } catch (err) {
      if (!UNSUPPORTED.has((err as { code?: number }).code ?? -1)) throw err;
    }
  }
  await db
    .collection<{ _id: string; collection: string; swappedAt: Date }>(ALIASES)
    .updateOne({ _id: logical }, { $set: { collection: shadow, swappedAt: new Date() } }, { upsert: true });
  forgetAliases(db);
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
