/**
 * One collection's code index in a shared PostgreSQL database (pgvector), with the semantics of the
 * SQLite IndexStore: the same BM25 (pg-bm25.ts computes FTS5's bm25() from stored statistics), the
 * same name lookup (name-index.ts over the chunks whose names a query term can name), vectors by
 * cosine, and the same fusion (fusion.ts). Several replicas may open the same collection; writes to
 * one collection are serialized by a lock on its row, and `generation()` tells replicas' caches
 * when anything changed. See pg-schema.ts for the layout and README.md for what differs.
 */

import { endianness } from 'node:os';
import type { Pool, PoolClient } from 'pg';
import type { ChunkKind } from '../../chunking/chunk.ts';
import { CollectionGoneError, ModelMismatchError, SchemaMismatchError } from '../errors.ts';
import { filePriorOptions, pathsOf, rerankByFile } from '../file-priors.ts';
import { reciprocalRankFusion, RRF_K } from '../fusion.ts';
import { NameIndex, parseSymbol } from '../name-index.ts';
import { allQueryTerms, looksLikeCode } from '../query-profile.ts';
import { DEFAULT_CANDIDATES, NAMED_CANDIDATES, PLAIN_TEXT_BM25_WEIGHT } from '../store.ts';
import type { ChunkRecord, FileRecord, HitMetadata, ModelIdentity, RankedChunk, SearchHit, SearchOptions, StoredVector } from '../types.ts';
import { VectorMatrix } from '../vector-matrix.ts';
import { bm25Sql } from './pg-bm25.ts';
import { assertSchemaName, DEFAULT_PG_SCHEMA, PG_SCHEMA_VERSION, schemaStatements } from './pg-schema.ts';
import { bm25QueryTerms, chunkTerms } from '../bm25-terms.ts';
import { MemoryBm25, packPostings, type TermPostings } from '../memory-bm25.ts';
import type { CollectionSnapshot, CollectionSnapshots } from './collection-snapshots.ts';

export interface PgOpenOptions {
  /** the collection's id: every row of it carries this */
  readonly collection: string;
  /** the embedding model the caller queries with; a collection made with another one is refused */
  readonly model: ModelIdentity;
  /** the PostgreSQL schema holding the tables (default `rag`) */
  readonly schema?: string;
  /** where this process holds collections (vectors, names, postings) to search in memory; none: every search runs in the database */
  readonly snapshots?: CollectionSnapshots;
}

/** One key for every schema creation in a database: two processes creating at once take turns. */
const SCHEMA_LOCK_KEY = 0x7276_6563; // "rvec"
/** pgvector's largest `hnsw.ef_search` */
const MAX_EF_SEARCH = 1000;

interface ChunkRow {
  id: string;
  path: string;
  ordinal: number;
  start_line: number;
  end_line: number;
  kind: string;
  symbol: string | null;
  language: string;
  content: string;
}

interface Lexical {
  readonly candidates: number;
  readonly bm25: RankedChunk[];
  readonly named: RankedChunk[];
  readonly codeQuery: boolean;
}

export class PgIndexStore {
  readonly collection: string;
  readonly model: ModelIdentity;
  readonly schema: string;
  readonly #pool: Pool;
  readonly #t: ReturnType<typeof tables>;
  readonly #bm25: string;
  readonly #snapshots: CollectionSnapshots | undefined;
  #loading: Promise<void> | undefined;

  private constructor(pool: Pool, collection: string, model: ModelIdentity, schema: string, snapshots: CollectionSnapshots | undefined) {
    this.#pool = pool;
    this.#snapshots = snapshots;
    this.collection = collection;
    this.model = model;
    this.schema = schema;
    this.#t = tables(schema);
    this.#bm25 = bm25Sql(schema);
  }

  /**
   * Creates the extension, schema and tables when missing (idempotent; concurrent callers take
   * turns on an advisory lock, so two processes starting together do not fail on each other's
   * CREATE). Throws `SchemaMismatchError` for tables of another layout version, and a RangeError
   * when the database's vectors have another size.
   */
  static async ensureSchema(pool: Pool, options: { schema?: string; dimensions: number }): Promise<void> {
    const schema = options.schema ?? DEFAULT_PG_SCHEMA;
    const statements = schemaStatements(schema, options.dimensions);
    const t = tables(schema);
    // Already made, as it is on every open but the first: no DDL, no lock.
    if ((await pool.query<{ t: string | null }>('SELECT to_regclass($1) AS t', [t.meta])).rows[0]?.t) {
      const meta = await pool.query<{ key: string; value: string }>(`SELECT key, value FROM ${t.meta}`);
      const value = (key: string) => meta.rows.find((r) => r.key === key)?.value;
      if (value('schema_version') === String(PG_SCHEMA_VERSION) && value('dimensions') === String(options.dimensions)) return;
    }
    await inTransaction(pool, 'BEGIN', async (c) => {
      await c.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK_KEY]);
      for (const statement of statements) await c.query(statement);
      await c.query(`INSERT INTO ${t.meta} (key, value) VALUES ('schema_version', $1), ('dimensions', $2) ON CONFLICT (key) DO NOTHING`, [
        String(PG_SCHEMA_VERSION),
        String(options.dimensions),
      ]);
      const meta = new Map(
        (await c.query<{ key: string; value: string }>(`SELECT key, value FROM ${t.meta}`)).rows.map((r) => [r.key, r.value]),
      );
      const version = meta.get('schema_version') ?? '(none)';
      if (version !== String(PG_SCHEMA_VERSION)) throw new SchemaMismatchError(`PostgreSQL schema ${schema}`, version, PG_SCHEMA_VERSION);
      if (meta.get('dimensions') !== String(options.dimensions)) {
        throw new RangeError(
          `PostgreSQL schema ${schema} holds vectors of ${meta.get('dimensions')} dimensions, not ${options.dimensions}: use another schema for this model`,
        );
      }
    });
  }

  /**
   * Opens (creating when missing) a collection. Throws `ModelMismatchError` when it was made by
   * another model (rebuild: `drop`, then open again). The pool stays the caller's.
   */
  static async open(pool: Pool, options: PgOpenOptions): Promise<PgIndexStore> {
    const { model, collection } = options;
    const schema = options.schema ?? DEFAULT_PG_SCHEMA;
    if (!model.name || !Number.isInteger(model.dimensions) || model.dimensions < 1) {
      throw new RangeError(`a model identity needs a name and a positive dimension count, got ${JSON.stringify(model)}`);
    }
    if (!collection) throw new RangeError('a collection id must not be empty');
    await PgIndexStore.ensureSchema(pool, { schema, dimensions: model.dimensions });
    const t = tables(schema);
    // Starts at the clock's milliseconds, as the SQLite store: a collection dropped and made again
    // does not reuse the generations of the one it replaces.
    await pool.query(
      `INSERT INTO ${t.collections} (collection_id, model, dimensions, generation) VALUES ($1, $2, $3, $4) ON CONFLICT (collection_id) DO NOTHING`,
      [collection, model.name, model.dimensions, Date.now()],
    );
    const row = (
      await pool.query<{ model: string; dimensions: number }>(`SELECT model, dimensions FROM ${t.collections} WHERE collection_id = $1`, [
        collection,
      ])
    ).rows[0];
    if (!row) throw new Error(`collection ${collection} was dropped while it was being opened`);
    if (row.model !== model.name || row.dimensions !== model.dimensions) {
      throw new ModelMismatchError(`${schema}/${collection}`, { name: row.model, dimensions: row.dimensions }, model);
    }
    return new PgIndexStore(pool, collection, model, schema, options.snapshots);
  }

  /** Deletes a collection and everything of it; returns whether it was there. */
  static async drop(pool: Pool, collection: string, options: { schema?: string } = {}): Promise<boolean> {
    const schema = options.schema ?? DEFAULT_PG_SCHEMA;
    assertSchemaName(schema);
    const exists = (await pool.query<{ t: string | null }>('SELECT to_regclass($1) AS t', [`"${schema}".collections`])).rows[0]?.t;
    if (!exists) return false;
    const result = await pool.query(`DELETE FROM ${tables(schema).collections} WHERE collection_id = $1`, [collection]);
    return (result.rowCount ?? 0) > 0;
  }

  /** Changes with every committed write to the collection, from any process. */
  async generation(): Promise<number> {
    const row = (
      await this.#pool.query<{ generation: string }>(`SELECT generation FROM ${this.#t.collections} WHERE collection_id = $1`, [
        this.collection,
      ])
    ).rows[0];
    if (!row) throw this.#gone();
    return Number(row.generation);
  }

  /** Every indexed file, by path. */
  async manifest(): Promise<FileRecord[]> {
    const { rows } = await this.#pool.query<{ path: string; hash: string; size: string; chunks: number; indexed_at: string }>(
      `SELECT path, hash, size, chunks, indexed_at FROM ${this.#t.files} WHERE collection_id = $1 ORDER BY path`,
      [this.collection],
    );
    return rows.map((r) => ({ path: r.path, hash: r.hash, size: Number(r.size), chunks: r.chunks, indexedAt: Number(r.indexed_at) }));
  }

  async fileHash(path: string): Promise<string | undefined> {
    const { rows } = await this.#pool.query<{ hash: string }>(`SELECT hash FROM ${this.#t.files} WHERE collection_id = $1 AND path = $2`, [
      this.collection,
      path,
    ]);
    return rows[0]?.hash;
  }

  async counts(): Promise<{ files: number; chunks: number }> {
    const { rows } = await this.#pool.query<{ files: number; chunks: number }>(
      `SELECT (SELECT count(*) FROM ${this.#t.files} WHERE collection_id = $1)::int AS files,
              (SELECT count(*) FROM ${this.#t.chunks} WHERE collection_id = $1)::int AS chunks`,
      [this.collection],
    );
    const row = rows[0] as { files: number; chunks: number };
    return { files: row.files, chunks: row.chunks };
  }

  /** Chunks of one file in order. */
  async fileChunks(path: string): Promise<Array<HitMetadata & { content: string; ordinal: number }>> {
    const { rows } = await this.#pool.query<ChunkRow>(
      `SELECT ${CHUNK_COLUMNS} FROM ${this.#t.chunks} WHERE collection_id = $1 AND path = $2 ORDER BY ordinal`,
      [this.collection, path],
    );
    return rows.map((r) => ({ ...metadataOf(r), content: r.content, ordinal: r.ordinal }));
  }

  /** One file's chunks with their vectors, in order: what re-indexing the file can reuse. */
  async fileVectors(path: string): Promise<StoredVector[]> {
    // real[]: pgvector's cast; each float4 comes back as the shortest text that reads back as itself.
    const { rows } = await this.#pool.query<{ kind: string; symbol: string | null; content: string; embedding: number[] }>(
      `SELECT kind, symbol, content, embedding::real[] AS embedding FROM ${this.#t.chunks} WHERE collection_id = $1 AND path = $2 ORDER BY ordinal`,
      [this.collection, path],
    );
    return rows.map((r) => ({
      kind: r.kind as ChunkKind,
      ...(r.symbol === null ? {} : { symbol: r.symbol }),
      content: r.content,
      vector: Float32Array.from(r.embedding),
    }));
  }

  /**
   * Replaces one file's chunks, search terms and vectors in one transaction: readers see the file
   * either as it was or as given. Vectors must be unit vectors of the store's dimensions.
   */
  async writeFile(file: { path: string; hash: string; size: number }, chunks: readonly ChunkRecord[]): Promise<void> {
    for (const chunk of chunks) {
      if (chunk.vector.length !== this.model.dimensions) {
        throw new RangeError(`${file.path}: a vector of ${chunk.vector.length} dimensions, the store holds ${this.model.dimensions}`);
      }
    }
    const c = {
      ordinal: [] as number[],
      startLine: [] as number[],
      endLine: [] as number[],
      kind: [] as string[],
      symbol: [] as Array<string | null>,
      language: [] as string[],
      partIndex: [] as Array<number | null>,
      partCount: [] as Array<number | null>,
      content: [] as string[],
      termCount: [] as number[],
      nameWhole: [] as Array<string | null>,
      nameFirst: [] as Array<string | null>,
      embedding: [] as string[],
    };
    const p = { ordinal: [] as number[], term: [] as string[], symbol: [] as number[], path: [] as number[], body: [] as number[] };
    let tokens = 0;
    chunks.forEach((chunk, ordinal) => {
      const terms = chunkTerms(chunk, file.path);
      const last = parseSymbol(chunk.symbol).last;
      c.ordinal.push(ordinal);
      c.startLine.push(chunk.startLine);
      c.endLine.push(chunk.endLine);
      c.kind.push(chunk.kind);
      c.symbol.push(chunk.symbol ?? null);
      c.language.push(chunk.language);
      c.partIndex.push(chunk.part?.index ?? null);
      c.partCount.push(chunk.part?.count ?? null);
      c.content.push(chunk.content);
      c.termCount.push(terms.length);
      c.nameWhole.push(last?.whole ?? null);
      c.nameFirst.push(last?.parts[0] ?? null);
      c.embedding.push(vectorLiteral(chunk.vector));
      tokens += terms.length;
      for (const [term, n] of terms.counts) {
        p.ordinal.push(ordinal);
        p.term.push(term);
        p.symbol.push(n.symbol);
        p.path.push(n.path);
        p.body.push(n.body);
      }
    });
    const t = this.#t;
    await this.#write(async (db) => {
      const gone = await this.#deleteChunks(db, [file.path]);
      await db.query(
        `INSERT INTO ${t.files} (collection_id, path, hash, size, chunks, indexed_at) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (collection_id, path) DO UPDATE SET hash = excluded.hash, size = excluded.size, chunks = excluded.chunks, indexed_at = excluded.indexed_at`,
        [this.collection, file.path, file.hash, file.size, chunks.length, Date.now()],
      );
      if (chunks.length > 0) {
        const inserted = await db.query<{ id: string; ordinal: number }>(
          `INSERT INTO ${t.chunks} (collection_id, path, ordinal, start_line, end_line, kind, symbol, language, part_index, part_count,
                                    content, term_count, name_whole, name_first, embedding)
           SELECT $1, $2, o, sl, el, k, sy, la, pi, pc, co, tc, nw, nf, e::vector
           FROM unnest($3::int[], $4::int[], $5::int[], $6::text[], $7::text[], $8::text[], $9::int[], $10::int[], $11::text[],
                       $12::int[], $13::text[], $14::text[], $15::text[]) AS x(o, sl, el, k, sy, la, pi, pc, co, tc, nw, nf, e)
           RETURNING id, ordinal`,
          [
            this.collection,
            file.path,
            c.ordinal,
            c.startLine,
            c.endLine,
            c.kind,
            c.symbol,
            c.language,
            c.partIndex,
            c.partCount,
            c.content,
            c.termCount,
            c.nameWhole,
            c.nameFirst,
            c.embedding,
          ],
        );
        const idOf = new Map(inserted.rows.map((r) => [r.ordinal, r.id]));
        await db.query(
          `INSERT INTO ${t.postings} (collection_id, term, chunk_id, in_symbol, in_path, in_body)
           SELECT $1, te, ch, sy, pa, bo FROM unnest($2::text[], $3::bigint[], $4::int[], $5::int[], $6::int[]) AS x(te, ch, sy, pa, bo)`,
          [this.collection, p.term, p.ordinal.map((o) => idOf.get(o) as string), p.symbol, p.path, p.body],
        );
      }
      return { chunks: chunks.length - gone.chunks, tokens: tokens - gone.tokens };
    });
  }

  /** Removes files and everything of theirs, in one transaction; returns how many were there. */
  async removeFiles(paths: readonly string[]): Promise<number> {
    if (paths.length === 0) return 0;
    let removed = 0;
    await this.#write(async (db) => {
      const gone = await this.#deleteChunks(db, paths);
      const result = await db.query(`DELETE FROM ${this.#t.files} WHERE collection_id = $1 AND path = ANY($2::text[])`, [
        this.collection,
        [...paths],
      ]);
      removed = result.rowCount ?? 0;
      return { chunks: -gone.chunks, tokens: -gone.tokens };
    });
    return removed;
  }

  /** BM25 as the SQLite store ranks it (pg-bm25.ts): best first; ties by path and chunk order. */
  async searchBm25(query: string, k: number): Promise<RankedChunk[]> {
    return this.#read(async (db) => this.#searchBm25(db, await this.#held(db), query, k));
  }

  /**
   * Cosine similarity through the HNSW index, best first; ties by path and chunk order. Approximate
   * where the SQLite store is exact (README.md): the iterative scan keeps filtering by collection
   * from returning fewer than k.
   */
  async searchVector(queryVector: Float32Array, k: number): Promise<RankedChunk[]> {
    return this.#read(async (db) => this.#searchVector(db, await this.#held(db), queryVector, k));
  }

  /** Chunks the query names (name-index.ts), those naming more segments first. */
  async searchNamed(query: string, k: number): Promise<RankedChunk[]> {
    return this.#read(async (db) => this.#searchNamed(db, await this.#held(db), query, k));
  }

  /**
   * Hybrid search, as IndexStore.search: reciprocal rank fusion of the top `candidates` of BM25 and
   * of the vectors and the chunks the query names, the best `k` with their text and metadata. All
   * lists and the texts are read in one snapshot, so a concurrent write cannot mix two versions.
   */
  async search(query: string, queryVector: Float32Array, k: number, options: SearchOptions = {}): Promise<SearchHit[]> {
    return this.#read(async (db) => {
      const candidates = Math.max(k, options.candidates ?? DEFAULT_CANDIDATES);
      // Each list from this process's snapshot when it is of the generation this transaction sees:
      // the same lists the statements give, without the database's CPU.
      const held = await this.#held(db);
      const named = await this.#searchNamed(db, held, query, NAMED_CANDIDATES);
      const lexical: Lexical = {
        candidates,
        bm25: await this.#searchBm25(db, held, query, candidates),
        named,
        codeQuery: named.length > 0 || looksLikeCode(query),
      };
      const semantic = await this.#searchVector(db, held, queryVector, candidates);
      // The lists and weights of IndexStore's #fuse.
      const fused = reciprocalRankFusion(
        [
          {
            items: lexical.bm25.map((r) => r.rowId),
            weight: lexical.codeQuery ? (options.bm25Weight ?? 1) : (options.plainTextBm25Weight ?? PLAIN_TEXT_BM25_WEIGHT),
          },
          { items: semantic.map((r) => r.rowId), weight: options.vectorWeight ?? 1 },
          { items: lexical.named.map((r) => r.rowId), weight: options.namedWeight ?? 1 },
        ],
        options.rrfK ?? RRF_K,
      );
      const ranked = rerankByFile(fused, pathsOf(lexical.bm25, lexical.named, semantic), query, Math.max(0, k), filePriorOptions(options));
      return this.#hits(
        db,
        ranked.map((f) => ({ rowId: f.item, score: f.score })),
      );
    });
  }

  /** Hits for row ids from the single-list searches, in the order given. */
  async hits(ranked: ReadonlyArray<Pick<RankedChunk, 'rowId' | 'score'>>): Promise<SearchHit[]> {
    return this.#read((db) => this.#hits(db, ranked));
  }

  /** BM25 (pg-bm25.ts): from `held` when given (memory-bm25.ts, the same list), else by the statement. */
  async #searchBm25(db: PoolClient, held: CollectionSnapshot | undefined, query: string, k: number): Promise<RankedChunk[]> {
    const terms = bm25QueryTerms(query);
    if (terms.length === 0 || k <= 0) return [];
    if (held) return held.bm25.search(terms, k).map(({ row, score }) => rankedIn(held, row, score));
    const { rows } = await db.query<{ id: string; path: string; ordinal: number; score: number }>({
      // Prepared once per connection: parsing and planning were a fifth of the query's time.
      name: `svc-rag-bm25-${this.schema}`,
      text: this.#bm25,
      values: [this.collection, terms, Math.floor(k)],
    });
    return rows.map((r) => ({ rowId: Number(r.id), path: r.path, ordinal: r.ordinal, score: r.score }));
  }

  /**
   * This process's snapshot of the collection, if it is of the generation this transaction sees;
   * otherwise none, and a snapshot of this generation is taken in the background (collection-snapshots.ts).
   */
  async #held(db: PoolClient): Promise<CollectionSnapshot | undefined> {
    const snapshots = this.#snapshots;
    if (!snapshots) return undefined;
    const { generation, chunks } = await this.#counters(db);
    const held = snapshots.get(this.collection, generation);
    if (!held && snapshots.fits(chunks, this.model.dimensions)) this.#takeSnapshot();
    return held;
  }

  /** The collection's row as `db`'s transaction sees it: its generation and BM25 counters. */
  async #counters(db: PoolClient): Promise<{ generation: number; chunks: number; tokens: number }> {
    const row = (
      await db.query<{ generation: string; chunks: string; tokens: string }>({
        name: `svc-rag-counters-${this.schema}`,
        text: `SELECT generation, chunk_count AS chunks, token_count AS tokens FROM ${this.#t.collections} WHERE collection_id = $1`,
        values: [this.collection],
      })
    ).rows[0];
    if (!row) throw this.#gone();
    return { generation: Number(row.generation), chunks: Number(row.chunks), tokens: Number(row.tokens) };
  }

  /** Reads the collection (vectors, names, postings) as of one generation into the snapshots; one load at a time per handle. */
  #takeSnapshot(): void {
    const snapshots = this.#snapshots;
    if (!snapshots || this.#loading || !snapshots.startLoad(this.collection)) return;
    const d = this.model.dimensions;
    this.#loading = this.#read(async (db) => {
      const head = await this.#counters(db);
      if (!snapshots.fits(head.chunks, d)) return;
      // vector_send: pgvector's binary form (int16 dimensions, int16 unused, then big-endian float4s),
      // a tenth of the text form to move and parse.
      const { rows } = await db.query<{ id: string; path: string; ordinal: number; symbol: string | null; terms: number; v: Buffer }>(
        `SELECT id, path, ordinal, symbol, term_count AS terms, vector_send(embedding) AS v
         FROM ${this.#t.chunks} WHERE collection_id = $1 ORDER BY path, ordinal`,
        [this.collection],
      );
      // Copied whole and byte-swapped in one native pass: no per-float work on the loop that answers requests.
      const data = new Float32Array(rows.length * d);
      const bytes = Buffer.from(data.buffer);
      rows.forEach((r, i) => {
        if (r.v.length !== 4 + 4 * d || r.v.readInt16BE(0) !== d) throw new Error(`a vector of ${this.collection} is not ${d} floats`);
        r.v.copy(bytes, i * d * 4, 4);
      });
      if (bytes.length > 0 && endianness() === 'LE') bytes.swap32();
      const matrix = new VectorMatrix(
        d,
        data,
        Int32Array.from(rows, (_, i) => i),
        rows.map((r) => r.path),
        Int32Array.from(rows, (r) => r.ordinal),
      );
      // Postings by term, read by the collection's key alone (the primary key's prefix) and each chunk
      // id turned into its row above in this process: the same transaction, so the same chunks. A join
      // to the chunks' row numbers in the statement was planned as one index search per chunk while
      // the tables' statistics still described them empty: 1.2 s for 868 chunks (bench:rag, nodemailer).
      const rowOf = new Map(rows.map((r, i) => [r.id, i]));
      const postings = await db.query<{ term: string; ids: string[]; s: number[]; p: number[]; b: number[] }>(
        `SELECT term, array_agg(chunk_id) AS ids, array_agg(in_symbol) AS s, array_agg(in_path) AS p, array_agg(in_body) AS b
         FROM ${this.#t.postings} WHERE collection_id = $1 GROUP BY term`,
        [this.collection],
      );
      const byTerm = new Map<string, TermPostings>();
      for (const t of postings.rows) {
        const termRows = t.ids.map((id) => {
          const row = rowOf.get(id);
          if (row === undefined) throw new Error(`a posting of ${this.collection} names chunk ${id}, which it does not hold`);
          return row;
        });
        // Copied once, into the packed arrays: no typed arrays per term on the way.
        byTerm.set(t.term, { rows: termRows, inSymbol: t.s, inPath: t.p, inBody: t.b });
      }
      snapshots.set(this.collection, head.generation, {
        matrix,
        ids: rows.map((r) => Number(r.id)),
        names: new NameIndex(rows.map((r) => parseSymbol(r.symbol ?? undefined))),
        bm25: new MemoryBm25(
          packPostings(byTerm),
          Int32Array.from(rows, (r) => r.terms),
          head.chunks,
          head.tokens,
        ),
      });
    })
      // Searches go on through the index meanwhile; the next one tries again.
      .catch(() => undefined)
      .finally(() => {
        snapshots.endLoad();
        this.#loading = undefined;
      });
  }

  /** Waits for a snapshot load in flight, if any (tests, benches). */
  async snapshotLoaded(): Promise<void> {
    await this.#loading;
  }

  /** The nearest chunks: exact from `held` when given, else through the HNSW index. */
  async #searchVector(db: PoolClient, held: CollectionSnapshot | undefined, queryVector: Float32Array, k: number): Promise<RankedChunk[]> {
    if (queryVector.length !== this.model.dimensions) {
      throw new RangeError(`query has ${queryVector.length} dimensions, the index ${this.model.dimensions}`);
    }
    if (k <= 0) return [];
    const limit = Math.floor(k);
    if (held) return held.matrix.nearest(queryVector, limit).map(({ row, score }) => rankedIn(held, row, score));
    // Transaction-local: the HNSW scan must look at no fewer than k candidates, and keep scanning
    // (in distance order) past other collections' rows until k of this one are found.
    await db.query(`SELECT set_config('hnsw.ef_search', $1, true), set_config('hnsw.iterative_scan', 'strict_order', true)`, [
      String(Math.min(MAX_EF_SEARCH, Math.max(40, limit))),
    ]);
    const { rows } = await db.query<{ id: string; path: string; ordinal: number; score: number }>(
      `SELECT id, path, ordinal, score FROM (
         SELECT id, path, ordinal, 1 - (embedding <=> $2::vector) AS score
         FROM ${this.#t.chunks} WHERE collection_id = $1
         ORDER BY embedding <=> $2::vector
         LIMIT $3
       ) nearest
       ORDER BY score DESC, path, ordinal`,
      [this.collection, vectorLiteral(queryVector), limit],
    );
    return rows.map((r) => ({ rowId: Number(r.id), path: r.path, ordinal: r.ordinal, score: r.score }));
  }

  /** The chunks the query names: from `held`'s NameIndex when given, else from the rows holding its keys. */
  async #searchNamed(db: PoolClient, held: CollectionSnapshot | undefined, query: string, k: number): Promise<RankedChunk[]> {
    if (k <= 0) return [];
    const terms = allQueryTerms(query);
    if (terms.size === 0) return [];
    if (held) return held.names.named(terms, k).map(({ row, segments }) => rankedIn(held, row, segments));
    // The NameIndex finds rows by these two keys only, so the rows holding either are all it can
    // return; in (path, ordinal) order, as the SQLite store numbers its rows, for the same ties.
    const { rows } = await db.query<{ id: string; path: string; ordinal: number; symbol: string | null }>({
      name: `svc-rag-named-${this.schema}`,
      text: `SELECT id, path, ordinal, symbol FROM ${this.#t.chunks}
       WHERE collection_id = $1 AND (name_whole = ANY($2::text[]) OR name_first = ANY($2::text[]))
       ORDER BY path, ordinal`,
      values: [this.collection, [...terms]],
    });
    const names = new NameIndex(rows.map((r) => parseSymbol(r.symbol ?? undefined)));
    return names.named(terms, k).map(({ row, segments }) => {
      const r = rows[row] as (typeof rows)[number];
      return { rowId: Number(r.id), path: r.path, ordinal: r.ordinal, score: segments };
    });
  }

  async #hits(db: PoolClient, ranked: ReadonlyArray<Pick<RankedChunk, 'rowId' | 'score'>>): Promise<SearchHit[]> {
    if (ranked.length === 0) return [];
    const { rows } = await db.query<ChunkRow>({
      name: `svc-rag-hits-${this.schema}`,
      text: `SELECT ${CHUNK_COLUMNS} FROM ${this.#t.chunks} WHERE collection_id = $1 AND id = ANY($2::bigint[])`,
      values: [this.collection, ranked.map((r) => String(r.rowId))],
    });
    const byId = new Map(rows.map((r) => [Number(r.id), r]));
    const hits: SearchHit[] = [];
    for (const { rowId, score } of ranked) {
      const row = byId.get(rowId);
      if (row) hits.push({ id: `${row.path}#${row.ordinal}`, content: row.content, score, metadata: metadataOf(row) });
    }
    return hits;
  }

  /** Deletes the chunks of `paths` (their postings go with them); what they counted for BM25. */
  async #deleteChunks(db: PoolClient, paths: readonly string[]): Promise<{ chunks: number; tokens: number }> {
    const { rows } = await db.query<{ chunks: number; tokens: string }>(
      `WITH gone AS (DELETE FROM ${this.#t.chunks} WHERE collection_id = $1 AND path = ANY($2::text[]) RETURNING term_count)
       SELECT count(*)::int AS chunks, coalesce(sum(term_count), 0)::bigint AS tokens FROM gone`,
      [this.collection, [...paths]],
    );
    const row = rows[0] as { chunks: number; tokens: string };
    return { chunks: row.chunks, tokens: Number(row.tokens) };
  }

  /**
   * A write transaction: the collection's row is locked first (one writer per collection, as one
   * SQLite file has), and the work's change to the BM25 statistics is applied with the generation.
   */
  async #write(work: (db: PoolClient) => Promise<{ chunks: number; tokens: number }>): Promise<void> {
    await inTransaction(this.#pool, 'BEGIN', async (db) => {
      const locked = await db.query(`SELECT 1 FROM ${this.#t.collections} WHERE collection_id = $1 FOR UPDATE`, [this.collection]);
      if (locked.rowCount === 0) throw this.#gone();
      const delta = await work(db);
      await db.query(
        `UPDATE ${this.#t.collections}
         SET generation = generation + 1, chunk_count = chunk_count + $2, token_count = token_count + $3
         WHERE collection_id = $1`,
        [this.collection, delta.chunks, delta.tokens],
      );
    });
  }

  /** A read in one snapshot. */
  async #read<T>(work: (db: PoolClient) => Promise<T>): Promise<T> {
    return inTransaction(this.#pool, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', work);
  }

  #gone(): Error {
    return new CollectionGoneError(this.collection, this.schema);
  }
}

const CHUNK_COLUMNS = 'id, path, ordinal, start_line, end_line, kind, symbol, language, content';

function tables(schema: string) {
  assertSchemaName(schema);
  const s = `"${schema}"`;
  return { meta: `${s}.meta`, collections: `${s}.collections`, files: `${s}.files`, chunks: `${s}.chunks`, postings: `${s}.postings` };
}

async function inTransaction<T>(pool: Pool, begin: string, work: (db: PoolClient) => Promise<T>): Promise<T> {
  const db = await pool.connect();
  let broken: Error | undefined;
  try {
    await db.query(begin);
    const result = await work(db);
    await db.query('COMMIT');
    return result;
  } catch (e) {
    try {
      await db.query('ROLLBACK');
    } catch (rollback) {
      // a connection that cannot roll back is not handed to the next caller
      broken = rollback as Error;
    }
    throw e;
  } finally {
    db.release(broken);
  }
}

/** pgvector's text form; a float32 printed as a double reads back as the same float32. */
function vectorLiteral(vector: Float32Array): string {
  return `[${Array.from(vector).join(',')}]`;
}

function metadataOf(row: ChunkRow): HitMetadata {
  return {
    file: row.path,
    type: row.kind as ChunkKind,
    startLine: row.start_line,
    endLine: row.end_line,
    language: row.language,
    ...(row.symbol === null ? {} : { symbol: row.symbol }),
  };
}

/** A snapshot's row as a ranked chunk. */
function rankedIn(held: CollectionSnapshot, row: number, score: number): RankedChunk {
  return { rowId: held.ids[row] as number, path: held.matrix.paths[row] as string, ordinal: held.matrix.ordinals[row] as number, score };
}
