/**
 * The layout of the shared code index in PostgreSQL (pgvector): one set of tables in one schema for
 * every collection, each row keyed by `collection_id`, so many tenants and replicas share one
 * database. Bump PG_SCHEMA_VERSION with any change here; a database of another version is refused
 * (`SchemaMismatchError`), as the SQLite store does (the index is derived data: rebuild, no migrations).
 *
 * - `meta`: `schema_version` and `dimensions` (the `vector(n)` column has one size for all rows).
 * - `collections`: one row per collection: the model that made its vectors, its `generation`
 *   (bumped by every committed write, for replicas' caches) and the BM25 statistics FTS5 keeps for
 *   itself (how many chunks, how many search terms in all: the average document length). Writes lock
 *   this row, so one collection has one writer at a time, as a SQLite file does.
 * - `files`: one row per indexed file with its sha256 and chunk count.
 * - `chunks`: a file's chunks in order, the text and metadata handed back, the chunk's term count
 *   (BM25's document length), the two keys of its name for name lookups (name-index.ts), and its
 *   vector with an HNSW cosine index.
 * - `postings`: how often each search term occurs in a chunk's symbol, path and body: FTS5's
 *   three columns, from which pg-bm25.ts computes FTS5's bm25() exactly.
 *
 * `path` and `term` use the "C" collation: byte order of UTF-8 is code-point order, the order of
 * SQLite's BINARY collation, so ties break as in the SQLite store.
 */

export const PG_SCHEMA_VERSION = 1;
export const DEFAULT_PG_SCHEMA = 'rag';

/** A lower-case SQL identifier: the schema name is spliced into statements, never user text. */
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

export function assertSchemaName(schema: string): void {
  if (!IDENTIFIER.test(schema)) throw new RangeError(`a PostgreSQL schema name of [a-z0-9_] (at most 63), got ${JSON.stringify(schema)}`);
}

/** The statements that create the tables when missing, in order; each is idempotent. */
export function schemaStatements(schema: string, dimensions: number): string[] {
  assertSchemaName(schema);
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > 16000) {
    throw new RangeError(`vector dimensions must be an integer in [1, 16000], got ${dimensions}`);
  }
  const s = `"${schema}"`;
  return [
    'CREATE EXTENSION IF NOT EXISTS vector',
    `CREATE SCHEMA IF NOT EXISTS ${s}`,
    `CREATE TABLE IF NOT EXISTS ${s}.meta (
      key   text PRIMARY KEY,
      value text NOT NULL
    )`,
    `CREATE TABLE IF NOT EXISTS ${s}.collections (
      collection_id text PRIMARY KEY,
      model         text NOT NULL,
      dimensions    integer NOT NULL,
      generation    bigint NOT NULL,
      chunk_count   bigint NOT NULL DEFAULT 0,
      token_count   bigint NOT NULL DEFAULT 0
    )`,
    `CREATE TABLE IF NOT EXISTS ${s}.files (
      collection_id text NOT NULL REFERENCES ${s}.collections ON DELETE CASCADE,
      path          text COLLATE "C" NOT NULL,
      hash          text NOT NULL,
      size          bigint NOT NULL,
      chunks        integer NOT NULL,
      indexed_at    bigint NOT NULL,
      PRIMARY KEY (collection_id, path)
    )`,
    `CREATE TABLE IF NOT EXISTS ${s}.chunks (
      id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      collection_id text NOT NULL,
      path          text COLLATE "C" NOT NULL,
      ordinal       integer NOT NULL,
      start_line    integer NOT NULL,
      end_line      integer NOT NULL,
      kind          text NOT NULL,
      symbol        text,
      language      text NOT NULL,
      part_index    integer,
      part_count    integer,
      content       text NOT NULL,
      term_count    integer NOT NULL,
      name_whole    text COLLATE "C",
      name_first    text COLLATE "C",
      embedding     vector(${dimensions}) NOT NULL,
      UNIQUE (collection_id, path, ordinal),
      FOREIGN KEY (collection_id, path) REFERENCES ${s}.files ON DELETE CASCADE
    )`,
    `CREATE INDEX IF NOT EXISTS chunks_embedding_hnsw ON ${s}.chunks USING hnsw (embedding vector_cosine_ops)`,
    `CREATE INDEX IF NOT EXISTS chunks_name_whole ON ${s}.chunks (collection_id, name_whole) WHERE name_whole IS NOT NULL`,
    `CREATE INDEX IF NOT EXISTS chunks_name_first ON ${s}.chunks (collection_id, name_first) WHERE name_first IS NOT NULL`,
    `CREATE TABLE IF NOT EXISTS ${s}.postings (
      collection_id text NOT NULL,
      term          text COLLATE "C" NOT NULL,
      chunk_id      bigint NOT NULL REFERENCES ${s}.chunks ON DELETE CASCADE,
      in_symbol     integer NOT NULL,
      in_path       integer NOT NULL,
      in_body       integer NOT NULL,
      PRIMARY KEY (collection_id, term, chunk_id)
    )`,
    // the cascade from chunks finds a chunk's postings by this
    `CREATE INDEX IF NOT EXISTS postings_chunk ON ${s}.postings (chunk_id)`,
  ];
}
