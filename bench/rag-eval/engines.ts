/**
 * The index engines bench/rag.ts measures, opened as the service opens them: the engine factory
 * (services/rag/collection-indexes.ts) and the `CollectionIndex` it hands out, one collection each.
 */

import { join } from 'node:path';
import pg from 'pg';
import { createLogger } from '../../services/platform/logger.ts';
import { collectionIndexes } from '../../services/rag/collection-indexes.ts';
import type { CollectionIndex } from '../../services/rag/index-store/collection-index.ts';
import { DEFAULT_PG_SCHEMA } from '../../services/rag/index-store/pg/pg-schema.ts';
import type { ModelIdentity } from '../../services/rag/index-store/types.ts';
import { intEnv } from '../bench-env.ts';
import { benchStack } from '../throwaway-stack.ts';

export type EngineName = 'sqlite' | 'postgres';

/** BENCH_RAG_ENGINE: `sqlite` (default), `postgres` or `both` (SQLite first). */
export function enginesOf(value: string | undefined): EngineName[] {
  switch (value ?? '') {
    case '':
    case 'sqlite':
      return ['sqlite'];
    case 'postgres':
      return ['postgres'];
    case 'both':
      return ['sqlite', 'postgres'];
    default:
      throw new Error(`BENCH_RAG_ENGINE must be sqlite, postgres or both, got "${value}"`);
  }
}

export interface BenchEngine {
  readonly name: EngineName;
  readonly index: CollectionIndex;
  /** Where it runs, for the report (never a password). */
  readonly where: string;
}

export interface OpenEngines {
  readonly engines: BenchEngine[];
  /** Drops the collections, the schema when this run made it, and stops a server this run started; idempotent. */
  close(): Promise<void>;
}

/**
 * Opens one collection per engine. PostgreSQL: RAG_DATABASE_URL when set, else a server started as
 * the local stack starts it (deploy/local/stack.ts, `ragDatabase`), with RAG_DATABASE_POOL
 * connections (the service's default, 10, otherwise).
 */
export async function openEngines(
  names: readonly EngineName[],
  options: { work: string; model: ModelIdentity; log: (line: string) => void },
): Promise<OpenEngines> {
  const logger = createLogger(process.env.LOG_LEVEL ?? 'warn');
  const collection = `bench-rag-${process.pid}`;
  const cleanups: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  };
  const engines: BenchEngine[] = [];
  try {
    for (const name of names) {
      if (name === 'sqlite') {
        const dataDir = join(options.work, 'sqlite');
        const indexes = collectionIndexes({ dataDir, indexEngine: { kind: 'sqlite' } }, logger);
        cleanups.push(() => indexes.close());
        engines.push({ name, index: await indexes.open(collection, options.model), where: `a file in ${dataDir}, this process` });
        continue;
      }
      const stack = await benchStack({ mongo: false, kafka: false, ragDatabase: true }, options.log);
      cleanups.push(() => stack.stop());
      const url = stack.env.RAG_DATABASE_URL;
      const admin = new pg.Pool({ connectionString: url, max: 1 });
      cleanups.push(() => admin.end());
      const before = await tableContents(admin);
      const poolSize = intEnv('RAG_DATABASE_POOL', 10);
      const indexes = collectionIndexes({ dataDir: options.work, indexEngine: { kind: 'postgres', url, poolSize } }, logger);
      cleanups.push(async () => {
        await indexes.drop(collection);
        await indexes.close();
        // Only a schema this run made, and only when no one else's collection arrived in it meanwhile.
        if (before === undefined && (await tableContents(admin))?.collections === 0) {
          await admin.query(`DROP SCHEMA ${DEFAULT_PG_SCHEMA} CASCADE`);
        }
      });
      const server = new URL(url);
      const held = before
        ? `its tables held ${before.chunks} chunks of ${before.collections} other collections`
        : 'no index tables before this run';
      engines.push({
        name,
        index: await indexes.open(collection, options.model),
        where: `${server.hostname}:${server.port}${server.pathname} (${stack.note}), schema ${DEFAULT_PG_SCHEMA}, pool of ${poolSize}; ${held}`,
      });
    }
  } catch (err) {
    await close();
    throw err;
  }
  return { engines, close };
}

/** What the shared index schema holds already, or undefined when it does not exist. */
async function tableContents(db: pg.Pool): Promise<{ collections: number; chunks: number } | undefined> {
  const exists = await db.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [DEFAULT_PG_SCHEMA]);
  if (exists.rowCount === 0) return undefined;
  const { rows } = await db.query<{ collections: string; chunks: string }>(
    `SELECT (SELECT count(*) FROM ${DEFAULT_PG_SCHEMA}.collections) AS collections, (SELECT count(*) FROM ${DEFAULT_PG_SCHEMA}.chunks) AS chunks`,
  );
  return { collections: Number(rows[0]?.collections ?? 0), chunks: Number(rows[0]?.chunks ?? 0) };
}
