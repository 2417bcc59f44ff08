import type { Config } from '../platform/config.ts';
import type { Logger } from '../platform/logger.ts';
import type { CollectionIndexes } from './index-store/collection-index.ts';
import { PgIndexes } from './index-store/pg/pg-indexes.ts';
import { SqliteIndexes } from './index-store/sqlite-indexes.ts';

/** The collections' indexes of this process, in the engine the configuration names (RAG_INDEX_ENGINE). */
export function collectionIndexes(
  rag: Pick<Config['rag'], 'dataDir' | 'indexEngine'>,
  log: Logger,
  options: { openIndexes?: number } = {},
): CollectionIndexes {
  const engine = rag.indexEngine;
  if (engine.kind === 'postgres') return new PgIndexes({ url: engine.url, poolSize: engine.poolSize, log });
  return new SqliteIndexes({
    dataDir: rag.dataDir,
    log,
    ...(options.openIndexes !== undefined ? { openIndexes: options.openIndexes } : {}),
  });
}
