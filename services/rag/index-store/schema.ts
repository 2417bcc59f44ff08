/**
 * The layout of one collection's SQLite file. Bump SCHEMA_VERSION with any change here: a store of
 * another version is refused (`SchemaMismatchError`) and rebuilt by the caller, which is cheap to
 * reason about for derived data and avoids migrations.
 *
 * - `meta`: `schema_version`, `model` and `dimensions` (what made the vectors: vectors of another
 *   model are not comparable), `generation` (bumped by every committed change).
 * - `files`: one row per indexed file, with the sha256 of its text (how the indexer tells an
 *   unchanged file) and how many chunks it has. A file with no chunks (empty) still has its row.
 * - `chunks`: a file's chunks in order (`ordinal`), with the line range, kind, symbol, language and
 *   text handed back in answers. `id` is also the rowid of `chunk_terms` and the key of `vectors`.
 * - `chunk_terms`: FTS5 over the search terms of each chunk in three columns (symbol, path, body)
 *   so BM25 can weigh a name match above a mention; contentless (the terms are derived from
 *   `chunks`, storing them twice would only grow the file) with `contentless_delete` so a file's
 *   rows can be deleted by rowid. `tokenchars '_-'` keeps snake_case and kebab-case names whole,
 *   as `termsOf` emits them.
 * - `vectors`: one float32 little-endian BLOB per chunk, apart from `chunks` so loading every
 *   vector does not page through the texts.
 */

export const SCHEMA_VERSION = 1;

export const SCHEMA = `
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE files (
  path       TEXT PRIMARY KEY,
  hash       TEXT NOT NULL,
  size       INTEGER NOT NULL,
  chunks     INTEGER NOT NULL,
  indexed_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE chunks (
  id         INTEGER PRIMARY KEY,
  path       TEXT NOT NULL REFERENCES files(path),
  ordinal    INTEGER NOT NULL,
  start_line INTEGER NOT NULL,
  end_line   INTEGER NOT NULL,
  kind       TEXT NOT NULL,
  symbol     TEXT,
  language   TEXT NOT NULL,
  part_index INTEGER,
  part_count INTEGER,
  content    TEXT NOT NULL,
  UNIQUE (path, ordinal)
);

CREATE VIRTUAL TABLE chunk_terms USING fts5(
  symbol, path, body,
  tokenize = "unicode61 tokenchars '_-'",
  content = '',
  contentless_delete = 1
);

CREATE TABLE vectors (
  chunk_id  INTEGER PRIMARY KEY REFERENCES chunks(id),
  embedding BLOB NOT NULL
);
`;
