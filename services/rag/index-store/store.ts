/**
 * One collection's index in one SQLite file (node:sqlite, no server): files with their hashes,
 * chunks, FTS5 search terms, and vectors; BM25 and the vectors are searched exactly in memory. See
 * schema.ts for the layout and README.md for the rules (one owner process, atomic writes per file,
 * generation).
 */

import { rmSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import type { StatementSync } from 'node:sqlite';
import type { ChunkKind } from '../chunking/chunk.ts';
import { BM25_WEIGHTS, bm25QueryTerms, type ChunkTerms, countTerms, termColumns } from './bm25-terms.ts';
import { ModelMismatchError, SchemaMismatchError, StoreBusyError } from './errors.ts';
import { ftsMatchExpression } from './fts-query.ts';
import { filePriorOptions, pathsOf, rerankByFile } from './file-priors.ts';
import { reciprocalRankFusion, RRF_K } from './fusion.ts';
import { MemorySnapshot } from './memory-snapshot.ts';
import type { SnapshotRow } from './memory-snapshot.ts';
import { allQueryTerms, looksLikeCode } from './query-profile.ts';
import { SCHEMA, SCHEMA_VERSION } from './schema.ts';
import { blob, integer, real, text, textOrNull } from './sqlite-rows.ts';
import type { SqliteRow } from './sqlite-rows.ts';
import type { ChunkRecord, FileRecord, ModelIdentity, RankedChunk, SearchHit, SearchOptions, StoredVector } from './types.ts';
import { VectorMatrix } from './vector-matrix.ts';

export interface OpenOptions {
  /** the embedding model the caller queries with; a store made with another one is refused */
  readonly model: ModelIdentity;
}

export { BM25_WEIGHTS };
export const DEFAULT_CANDIDATES = 50;
/**
 * BM25's weight in the fusion for a query with no code in it and naming no chunk (see
 * query-profile.ts): 0.4, the middle of 0.3-0.5, where the two development sets of bench/rag-eval
 * together score best with the windowed embedding (0.3 had been chosen on mongodb alone).
 */
export const PLAIN_TEXT_BM25_WEIGHT = 0.4;
/** How long one slice of a terms load may hold the thread, and the rows it reads at a time. */
const TERMS_SLICE_MS = 5;
const TERMS_BATCH = 16;
/** chunks the query names, at most */
export const NAMED_CANDIDATES = 10;

/** The parts of a hybrid search that need no vector. */
interface Lexical {
  /** the query's text: the file priors read what kinds of file it asks for */
  readonly query: string;
  readonly candidates: number;
  readonly bm25: RankedChunk[];
  readonly named: RankedChunk[];
  /** written in code or naming a chunk: BM25 counts fully */
  readonly codeQuery: boolean;
}

interface ChunkRow {
  id: number;
  path: string;
  ordinal: number;
  start_line: number;
  end_line: number;
  kind: string;
  symbol: string | null;
  language: string;
  content: string;
}

export class IndexStore {
  readonly file: string;
  readonly model: ModelIdentity;
  readonly #db: DatabaseSync;
  readonly #statements: ReturnType<typeof prepare>;
  #generation: number;
  #memory: MemorySnapshot | undefined;
  /** files changed since `#memory` was made (path -> its rows now), applied at the next query */
  #changes: Map<string, SnapshotRow[]> | undefined;
  /** Every chunk's terms being read for the current snapshot, a slice at a time (`#loadTerms`). */
  #termsLoad: { readonly snapshot: MemorySnapshot; readonly done: Promise<void>; stop(): void } | undefined;
  #closed = false;

  private constructor(file: string, db: DatabaseSync, model: ModelIdentity, generation: number) {
    this.file = file;
    this.model = model;
    this.#db = db;
    this.#generation = generation;
    this.#statements = prepare(db);
  }

  /**
   * Opens (creating when missing) the store in `file`. Throws `ModelMismatchError` or
   * `SchemaMismatchError` when the file was made by another model or schema (rebuild: `remove`,
   * then open again), and `StoreBusyError` when another connection holds it.
   */
  static open(file: string, options: OpenOptions): IndexStore {
    const { model } = options;
    if (!model.name || !Number.isInteger(model.dimensions) || model.dimensions < 1) {
      throw new RangeError(`a model identity needs a name and a positive dimension count, got ${JSON.stringify(model)}`);
    }
    const db = new DatabaseSync(file, { enableForeignKeyConstraints: true, timeout: 0 });
    try {
      // Exclusive: the first write below takes the lock for the life of the connection, so a second
      // owner fails at open instead of serving vectors that no longer match the rows.
      db.exec('PRAGMA locking_mode = EXCLUSIVE');
      db.exec('PRAGMA journal_mode = WAL');
      // WAL + NORMAL: a committed transaction survives a process crash; a power cut may lose the
      // last ones but never leaves one half-applied. The index is derived data, so that is enough.
      db.exec('PRAGMA synchronous = NORMAL');
      const generation = initialise(db, file, model);
      return new IndexStore(file, db, model, generation);
    } catch (e) {
      db.close();
      if (isBusy(e)) throw new StoreBusyError(file, { cause: e });
      throw e;
    }
  }

  /** Deletes a store's files (the database and its WAL and shared-memory files), when closed. */
  static remove(file: string): void {
    for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(file + suffix, { force: true });
  }

  /**
   * Changes with every committed change to the index, and is persisted. A new store starts at the
   * clock's milliseconds, so a store rebuilt at the same path does not reuse the numbers of the one
   * it replaces (a cache keyed on the generation stays right across rebuilds).
   */
  get generation(): number {
    return this.#generation;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Every indexed file, by path. */
  manifest(): FileRecord[] {
    this.#open();
    return this.#statements.manifest.all().map((r) => ({
      path: text(r, 'path'),
      hash: text(r, 'hash'),
      size: integer(r, 'size'),
      chunks: integer(r, 'chunks'),
      indexedAt: integer(r, 'indexed_at'),
    }));
  }

  fileHash(path: string): string | undefined {
    this.#open();
    const row = this.#statements.fileHash.get(path);
    return row === undefined ? undefined : text(row, 'hash');
  }

  counts(): { files: number; chunks: number } {
    this.#open();
    const row = this.#statements.counts.get();
    if (row === undefined) throw new Error(`${this.file}: the counts query returned no row`);
    return { files: integer(row, 'files'), chunks: integer(row, 'chunks') };
  }

  /** Chunks of one file in order (for tests, tools and the integrator's views). */
  fileChunks(path: string): Array<SearchHit['metadata'] & { content: string; ordinal: number }> {
    this.#open();
    return this.#statements.fileChunks
      .all(path)
      .map(chunkRow)
      .map((r) => ({
        ...metadataOf(r),
        content: r.content,
        ordinal: r.ordinal,
      }));
  }

  /** One file's chunks with their vectors, in order: what re-indexing the file can reuse. */
  fileVectors(path: string): StoredVector[] {
    this.#open();
    const d = this.model.dimensions;
    return this.#statements.fileVectors.all(path).map((r) => {
      const bytes = blob(r, 'embedding');
      if (bytes.byteLength !== d * 4) throw new Error(`${this.file}: a vector of ${path} is not ${d} floats`);
      // A copy: the row's bytes need not be aligned for a Float32Array view.
      const vector = new Float32Array(d);
      new Uint8Array(vector.buffer).set(bytes);
      const symbol = textOrNull(r, 'symbol');
      return { kind: text(r, 'kind') as ChunkKind, ...(symbol === null ? {} : { symbol }), content: text(r, 'content'), vector };
    });
  }

  /**
   * Replaces one file's chunks, terms and vectors in one transaction: a crash leaves the file
   * either as it was or as given, never half-written. Vectors must be unit vectors of the store's
   * dimensions.
   */
  writeFile(file: { path: string; hash: string; size: number }, chunks: readonly ChunkRecord[]): void {
    this.#open();
    for (const chunk of chunks) {
      if (chunk.vector.length !== this.model.dimensions) {
        throw new RangeError(`${file.path}: a vector of ${chunk.vector.length} dimensions, the store holds ${this.model.dimensions}`);
      }
    }
    const s = this.#statements;
    const rows: SnapshotRow[] = [];
    this.#transaction(() => {
      deleteChunksOf(s, file.path);
      s.upsertFile.run(file.path, file.hash, file.size, chunks.length, Date.now());
      chunks.forEach((chunk, ordinal) => {
        const { lastInsertRowid } = s.insertChunk.run(
          file.path,
          ordinal,
          chunk.startLine,
          chunk.endLine,
          chunk.kind,
          chunk.symbol ?? null,
          chunk.language,
          chunk.part?.index ?? null,
          chunk.part?.count ?? null,
          chunk.content,
        );
        const id = Number(lastInsertRowid);
        const columns = termColumns(chunk, file.path);
        s.insertTerms.run(id, columns[0].join(' '), columns[1].join(' '), columns[2].join(' '));
        s.insertVector.run(id, new Uint8Array(chunk.vector.buffer, chunk.vector.byteOffset, chunk.vector.byteLength));
        rows.push({
          rowId: id,
          ordinal,
          symbol: chunk.symbol,
          vector: Float32Array.from(chunk.vector),
          ...(this.#memory?.holdsTerms ? { terms: countTerms(columns) } : {}),
        });
      });
    });
    this.#changed(file.path, rows);
  }

  /** Removes files and everything of theirs, in one transaction; returns how many were there. */
  removeFiles(paths: readonly string[]): number {
    this.#open();
    if (paths.length === 0) return 0;
    let removed = 0;
    const s = this.#statements;
    this.#transaction(() => {
      for (const path of paths) {
        deleteChunksOf(s, path);
        removed += Number(s.deleteFile.run(path).changes);
      }
    });
    for (const path of paths) this.#changed(path, []);
    return removed;
  }

  /**
   * BM25 over the query's terms (identifiers split as in the index, stop words dropped), OR-ed.
   * Best first; ties by path and chunk order. Computed in memory (memory-bm25.ts) once the snapshot
   * holds every chunk's terms: FTS5's bm25() formula over the live rows, at a tenth of the FTS5
   * query's CPU on the thread that serves queries. Until then FTS5 answers (`searchBm25Fts`) while
   * the terms load in short slices between requests (`#loadTerms`).
   */
  searchBm25(query: string, k: number): RankedChunk[] {
    this.#open();
    if (k <= 0) return [];
    const terms = bm25QueryTerms(query);
    if (terms.length === 0) return [];
    const snapshot = this.#loaded();
    const bm25 = snapshot.bm25();
    if (!bm25) {
      this.#loadTerms(snapshot);
      return this.searchBm25Fts(query, k);
    }
    const { matrix } = snapshot;
    return bm25.search(terms, k).map(({ row, score }) => ({
      rowId: matrix.rowIds[row] as number,
      path: matrix.paths[row] as string,
      ordinal: matrix.ordinals[row] as number,
      score,
    }));
  }

  /** Whether BM25 is computed in memory now (the current snapshot holds every chunk's terms). */
  get termsHeld(): boolean {
    return this.#memory?.generation === this.#generation && this.#memory.holdsTerms;
  }

  /** Resolves when the terms load under way, if any, has ended (tests, benches). */
  termsLoaded(): Promise<void> {
    return this.#termsLoad?.done ?? Promise.resolve();
  }

  /** BM25 by FTS5: each query term quoted, so user text is never FTS5 syntax. */
  searchBm25Fts(query: string, k: number): RankedChunk[] {
    this.#open();
    const match = ftsMatchExpression(query);
    if (match === undefined || k <= 0) return [];
    // bm25() is lower-is-better; the lists here are larger-is-better.
    return this.#statements.bm25
      .all(match, Math.floor(k))
      .map((r) => ({ rowId: integer(r, 'id'), path: text(r, 'path'), ordinal: integer(r, 'ordinal'), score: -real(r, 'score') }));
  }

  /** Exact cosine (dot product of unit vectors) over every chunk, best first; ties by path and chunk order. */
  searchVector(queryVector: Float32Array, k: number): RankedChunk[] {
    this.#open();
    if (k <= 0) return [];
    const { matrix } = this.#loaded();
    return matrix.nearest(queryVector, k).map(({ row, score }) => ({
      rowId: matrix.rowIds[row] as number,
      path: matrix.paths[row] as string,
      ordinal: matrix.ordinals[row] as number,
      score,
    }));
  }

  /**
   * Chunks the query names (`checkOut`, `check out`, `ConnectionPool checkOut`; see
   * name-index.ts), those naming more segments first, then the closer matches.
   */
  searchNamed(query: string, k: number): RankedChunk[] {
    this.#open();
    if (k <= 0) return [];
    const { matrix, names } = this.#loaded();
    return names.named(allQueryTerms(query), k).map(({ row, segments }) => ({
      rowId: matrix.rowIds[row] as number,
      path: matrix.paths[row] as string,
      ordinal: matrix.ordinals[row] as number,
      score: segments,
    }));
  }

  /**
   * Hybrid search: reciprocal rank fusion (k = 60) of the top `candidates` of BM25, the top
   * `candidates` of the vectors, and the chunks the query names; the best `k` with their text and
   * metadata. BM25 counts fully when the query has code in it or names a chunk, and
   * `PLAIN_TEXT_BM25_WEIGHT` otherwise (query-profile.ts says why).
   */
  search(query: string, queryVector: Float32Array, k: number, options: SearchOptions = {}): SearchHit[] {
    const lexical = this.#lexical(query, k, options);
    return this.#fuse(lexical, this.searchVector(queryVector, lexical.candidates), k, options);
  }

  #lexical(query: string, k: number, options: SearchOptions): Lexical {
    const candidates = Math.max(k, options.candidates ?? DEFAULT_CANDIDATES);
    const named = this.searchNamed(query, NAMED_CANDIDATES);
    return { query, candidates, bm25: this.searchBm25(query, candidates), named, codeQuery: named.length > 0 || looksLikeCode(query) };
  }

  #fuse(lexical: Lexical, semantic: RankedChunk[], k: number, options: SearchOptions): SearchHit[] {
    const { codeQuery } = lexical;
    const fused = reciprocalRankFusion(
      [
        {
          items: lexical.bm25.map((r) => r.rowId),
          weight: codeQuery ? (options.bm25Weight ?? 1) : (options.plainTextBm25Weight ?? PLAIN_TEXT_BM25_WEIGHT),
        },
        { items: semantic.map((r) => r.rowId), weight: options.vectorWeight ?? 1 },
        { items: lexical.named.map((r) => r.rowId), weight: options.namedWeight ?? 1 },
      ],
      options.rrfK ?? RRF_K,
    );
    const ranked = rerankByFile(
      fused,
      pathsOf(lexical.bm25, lexical.named, semantic),
      lexical.query,
      Math.max(0, k),
      filePriorOptions(options),
    );
    return this.#hits(ranked.map((f) => ({ rowId: f.item, score: f.score })));
  }

  /** Hits for row ids from the single-list searches, in the order given. */
  hits(ranked: ReadonlyArray<Pick<RankedChunk, 'rowId' | 'score'>>): SearchHit[] {
    this.#open();
    return this.#hits(ranked);
  }

  /**
   * Problems with the store's consistency, none when all is well: every file's chunk count matches
   * its chunks, every chunk has one vector of the right size and one row of search terms, and the
   * full-text index passes its own integrity check. For tests and health checks; it reads everything.
   */
  verify(): string[] {
    this.#open();
    const problems: string[] = [];
    const all = (sql: string) => this.#db.prepare(sql).all();
    for (const r of all(
      `SELECT f.path, f.chunks, count(c.id) AS actual FROM files f LEFT JOIN chunks c ON c.path = f.path GROUP BY f.path HAVING f.chunks != count(c.id)`,
    )) {
      problems.push(`${String(r.path)}: ${String(r.chunks)} chunks recorded, ${String(r.actual)} stored`);
    }
    const bytes = this.model.dimensions * 4;
    for (const r of all(
      `SELECT c.id, c.path FROM chunks c LEFT JOIN vectors v ON v.chunk_id = c.id WHERE v.chunk_id IS NULL OR length(v.embedding) != ${bytes}`,
    )) {
      problems.push(`${String(r.path)}: chunk ${String(r.id)} has no vector of ${bytes} bytes`);
    }
    for (const r of all(`SELECT chunk_id FROM vectors WHERE chunk_id NOT IN (SELECT id FROM chunks)`))
      problems.push(`vector of missing chunk ${String(r.chunk_id)}`);
    for (const r of all(`SELECT c.id, c.path FROM chunks c WHERE c.id NOT IN (SELECT id FROM chunk_terms_docsize)`)) {
      problems.push(`${String(r.path)}: chunk ${String(r.id)} has no search terms`);
    }
    for (const r of all(`SELECT id FROM chunk_terms_docsize WHERE id NOT IN (SELECT id FROM chunks)`))
      problems.push(`search terms of missing chunk ${String(r.id)}`);
    try {
      this.#db.exec(`INSERT INTO chunk_terms (chunk_terms) VALUES ('integrity-check')`);
    } catch (e) {
      problems.push(`full-text index: ${(e as Error).message}`);
    }
    return problems;
  }

  /** Releases the file (and its lock). Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#termsLoad?.stop();
    this.#memory = undefined;
    this.#changes = undefined;
    this.#db.close();
  }

  #hits(ranked: ReadonlyArray<Pick<RankedChunk, 'rowId' | 'score'>>): SearchHit[] {
    if (ranked.length === 0) return [];
    const rows = this.#statements.chunksById.all(JSON.stringify(ranked.map((r) => r.rowId))).map(chunkRow);
    const byId = new Map(rows.map((r) => [r.id, r]));
    const hits: SearchHit[] = [];
    for (const { rowId, score } of ranked) {
      const row = byId.get(rowId);
      if (row) hits.push({ id: `${row.path}#${row.ordinal}`, content: row.content, score, metadata: metadataOf(row) });
    }
    return hits;
  }

  /** Only while there is a snapshot to patch: otherwise the next query loads everything anyway. */
  #changed(path: string, rows: SnapshotRow[]): void {
    if (!this.#memory) return;
    (this.#changes ??= new Map()).set(path, rows);
  }

  /**
   * Vectors and names in memory: loaded on first use, patched with the files written since (every
   * committed change goes through writeFile or removeFiles, which record it).
   */
  #loaded(): MemorySnapshot {
    const memory = this.#memory;
    if (memory?.generation === this.#generation) return memory;
    if (memory && this.#changes) {
      this.#memory = memory.patched(this.#changes, this.#generation);
      this.#changes = undefined;
      return this.#memory;
    }
    const d = this.model.dimensions;
    const { chunks } = this.counts();
    const data = new Float32Array(chunks * d);
    const bytes = new Uint8Array(data.buffer);
    const rowIds = new Int32Array(chunks);
    const ordinals = new Int32Array(chunks);
    const paths: string[] = [];
    const symbols: Array<string | undefined> = [];
    let row = 0;
    for (const r of this.#statements.allVectors.iterate()) {
      const embedding = blob(r, 'embedding');
      if (row >= chunks || embedding.byteLength !== d * 4) throw new Error(`${this.file}: vector table disagrees with the chunk table`);
      bytes.set(embedding, row * d * 4);
      rowIds[row] = integer(r, 'id');
      ordinals[row] = integer(r, 'ordinal');
      paths.push(text(r, 'path'));
      symbols.push(textOrNull(r, 'symbol') ?? undefined);
      row++;
    }
    if (row !== chunks) throw new Error(`${this.file}: ${chunks} chunks but ${row} vectors`);
    this.#memory = new MemorySnapshot(this.#generation, new VectorMatrix(d, data, rowIds, paths, ordinals), symbols);
    this.#changes = undefined;
    return this.#memory;
  }

  /**
   * Reads and counts every chunk's terms for `snapshot`, a few milliseconds at a time between
   * requests: tokenizing a collection's text costs about 0.15 ms a chunk, 0.3-0.4 s for 2,400 chunks,
   * which one search must not wait for. A write before the end abandons the load (the rows it read
   * may be gone); the next BM25 search starts one for the snapshot of that time.
   */
  #loadTerms(snapshot: MemorySnapshot): void {
    if (this.#termsLoad?.snapshot === snapshot) return;
    this.#termsLoad?.stop();
    let resolve = () => {};
    const done = new Promise<void>((r) => {
      resolve = r;
    });
    const rows: ChunkTerms[] = [];
    let after: [string, number] = ['', -1];
    let timer: NodeJS.Immediate | undefined;
    const load = {
      snapshot,
      done,
      stop: () => {
        if (timer) clearImmediate(timer);
        if (this.#termsLoad === load) this.#termsLoad = undefined;
        resolve();
      },
    };
    const slice = () => {
      timer = undefined;
      if (this.#closed || this.#generation !== snapshot.generation) return load.stop();
      const started = performance.now();
      try {
        while (rows.length < snapshot.matrix.rows && performance.now() - started < TERMS_SLICE_MS) {
          const before = rows.length;
          for (const r of this.#statements.termsAfter.iterate(after[0], after[1], TERMS_BATCH)) {
            if (integer(r, 'id') !== snapshot.matrix.rowIds[rows.length])
              throw new Error(`${this.file}: chunk table disagrees with the snapshot`);
            const symbol = textOrNull(r, 'symbol');
            const path = text(r, 'path');
            rows.push(countTerms(termColumns({ content: text(r, 'content'), ...(symbol === null ? {} : { symbol }) }, path)));
            after = [path, integer(r, 'ordinal')];
          }
          if (rows.length === before) throw new Error(`${this.file}: fewer chunks than the snapshot holds`);
        }
      } catch {
        // FTS5 goes on answering; the next BM25 search tries again.
        return load.stop();
      }
      if (rows.length < snapshot.matrix.rows) {
        timer = setImmediate(slice);
        return;
      }
      snapshot.holdTerms(rows);
      load.stop();
    };
    this.#termsLoad = load;
    timer = setImmediate(slice);
  }

  #transaction(work: () => void): void {
    this.#db.exec('BEGIN IMMEDIATE');
    try {
      work();
      this.#statements.bumpGeneration.run();
      this.#db.exec('COMMIT');
    } catch (e) {
      this.#db.exec('ROLLBACK');
      throw e;
    }
    this.#generation++;
  }

  #open(): void {
    if (this.#closed) throw new Error(`${this.file}: the index store is closed`);
  }
}

function initialise(db: DatabaseSync, file: string, model: ModelIdentity): number {
  db.exec('BEGIN IMMEDIATE');
  try {
    const exists = db.prepare(`SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'meta'`).get() !== undefined;
    if (!exists) {
      db.exec(SCHEMA);
      const put = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
      put.run('schema_version', String(SCHEMA_VERSION));
      put.run('model', model.name);
      put.run('dimensions', String(model.dimensions));
      put.run('generation', String(Date.now()));
    }
    const meta = new Map(
      db
        .prepare('SELECT key, value FROM meta')
        .all()
        .map((r) => [text(r, 'key'), text(r, 'value')]),
    );
    const version = meta.get('schema_version') ?? '(none)';
    if (version !== String(SCHEMA_VERSION)) throw new SchemaMismatchError(file, version, SCHEMA_VERSION);
    const stored = { name: meta.get('model') ?? '', dimensions: Number(meta.get('dimensions')) };
    if (stored.name !== model.name || stored.dimensions !== model.dimensions) throw new ModelMismatchError(file, stored, model);
    db.exec('COMMIT');
    return Number(meta.get('generation'));
  } catch (e) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw e;
  }
}

function prepare(db: DatabaseSync) {
  const w = BM25_WEIGHTS;
  const statements = {
    manifest: db.prepare('SELECT path, hash, size, chunks, indexed_at FROM files ORDER BY path'),
    fileHash: db.prepare('SELECT hash FROM files WHERE path = ?'),
    counts: db.prepare('SELECT (SELECT count(*) FROM files) AS files, (SELECT count(*) FROM chunks) AS chunks'),
    fileChunks: db.prepare('SELECT * FROM chunks WHERE path = ? ORDER BY ordinal'),
    fileVectors: db.prepare(
      'SELECT c.kind, c.symbol, c.content, v.embedding FROM chunks c JOIN vectors v ON v.chunk_id = c.id WHERE c.path = ? ORDER BY c.ordinal',
    ),
    upsertFile: db.prepare(
      `INSERT INTO files (path, hash, size, chunks, indexed_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (path) DO UPDATE SET hash = excluded.hash, size = excluded.size, chunks = excluded.chunks, indexed_at = excluded.indexed_at`,
    ),
    insertChunk: db.prepare(
      `INSERT INTO chunks (path, ordinal, start_line, end_line, kind, symbol, language, part_index, part_count, content)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    insertTerms: db.prepare('INSERT INTO chunk_terms (rowid, symbol, path, body) VALUES (?, ?, ?, ?)'),
    insertVector: db.prepare('INSERT INTO vectors (chunk_id, embedding) VALUES (?, ?)'),
    deleteTerms: db.prepare('DELETE FROM chunk_terms WHERE rowid IN (SELECT id FROM chunks WHERE path = ?)'),
    deleteVectors: db.prepare('DELETE FROM vectors WHERE chunk_id IN (SELECT id FROM chunks WHERE path = ?)'),
    deleteChunks: db.prepare('DELETE FROM chunks WHERE path = ?'),
    deleteFile: db.prepare('DELETE FROM files WHERE path = ?'),
    bumpGeneration: db.prepare(`UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'`),
    bm25: db.prepare(
      `SELECT c.id, c.path, c.ordinal, bm25(chunk_terms, ${w.symbol}, ${w.path}, ${w.body}) AS score
       FROM chunk_terms JOIN chunks c ON c.id = chunk_terms.rowid
       WHERE chunk_terms MATCH ?
       ORDER BY score, c.path, c.ordinal
       LIMIT ?`,
    ),
    allVectors: db.prepare(
      'SELECT c.id, c.path, c.ordinal, c.symbol, v.embedding FROM chunks c JOIN vectors v ON v.chunk_id = c.id ORDER BY c.path, c.ordinal',
    ),
    termsAfter: db.prepare(
      `SELECT c.id, c.path, c.ordinal, c.symbol, c.content FROM chunks c JOIN vectors v ON v.chunk_id = c.id
       WHERE (c.path, c.ordinal) > (?, ?) ORDER BY c.path, c.ordinal LIMIT ?`,
    ),
    chunksById: db.prepare('SELECT * FROM chunks WHERE id IN (SELECT value FROM json_each(?))'),
  } satisfies Record<string, StatementSync>;
  return statements;
}

function deleteChunksOf(s: ReturnType<typeof prepare>, path: string): void {
  s.deleteTerms.run(path);
  s.deleteVectors.run(path);
  s.deleteChunks.run(path);
}

function chunkRow(r: SqliteRow): ChunkRow {
  return {
    id: integer(r, 'id'),
    path: text(r, 'path'),
    ordinal: integer(r, 'ordinal'),
    start_line: integer(r, 'start_line'),
    end_line: integer(r, 'end_line'),
    kind: text(r, 'kind'),
    symbol: textOrNull(r, 'symbol'),
    language: text(r, 'language'),
    content: text(r, 'content'),
  };
}

function metadataOf(row: ChunkRow): SearchHit['metadata'] {
  return {
    file: row.path,
    type: row.kind as ChunkKind,
    startLine: row.start_line,
    endLine: row.end_line,
    language: row.language,
    ...(row.symbol === null ? {} : { symbol: row.symbol }),
  };
}

function isBusy(e: unknown): boolean {
  const code = (e as { errcode?: number } | undefined)?.errcode;
  // SQLITE_BUSY and SQLITE_LOCKED, with or without extended codes
  return code !== undefined && ((code & 0xff) === 5 || (code & 0xff) === 6);
}
