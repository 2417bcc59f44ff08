import { expect } from 'chai';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import pg from 'pg';
import { chunkFile } from '../../../services/rag/chunking/chunker.ts';
import type { Chunk } from '../../../services/rag/chunking/chunk.ts';
import { termsOf } from '../../../services/rag/chunking/identifiers.ts';
import { ModelMismatchError } from '../../../services/rag/index-store/errors.ts';
import { CollectionSnapshots } from '../../../services/rag/index-store/pg/collection-snapshots.ts';
import { PgIndexStore } from '../../../services/rag/index-store/pg/pg-store.ts';
import { IndexStore } from '../../../services/rag/index-store/store.ts';
import type { ChunkRecord, ModelIdentity, RankedChunk } from '../../../services/rag/index-store/types.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';

const MODEL: ModelIdentity = { name: 'handmade-4', dimensions: 4 };

function unit(values: readonly number[]): Float32Array {
  const norm = Math.hypot(...values);
  return Float32Array.from(values, (v) => v / norm);
}

function chunk(content: string, vector: readonly number[], extra: Partial<Chunk> = {}): ChunkRecord {
  const lines = content.split('\n').length;
  return { content, startLine: 1, endLine: lines, kind: 'function', language: 'typescript', ...extra, vector: unit(vector) };
}

const file = (path: string, version = 'v1') => ({ path, hash: `${version}:${path}`, size: 100 });

/** The database the stack provides, or one named by RAG_DATABASE_URL. */
async function databaseUrl(): Promise<string> {
  const env = (await useStack()) as { RAG_DATABASE_URL?: string };
  const url = env.RAG_DATABASE_URL || process.env.RAG_DATABASE_URL;
  if (!url) {
    throw new Error(
      'pg-index-store needs PostgreSQL with pgvector: the stack gave no RAG_DATABASE_URL and the environment has none (postgres://user@host:port/db)',
    );
  }
  return url;
}

describe('PgIndexStore: the code index in PostgreSQL + pgvector (integration)', function () {
  this.timeout(60_000);
  // One schema per run, dropped after: runs sharing a database do not see each other.
  const run = `rag_test_${process.pid}_${Date.now().toString(36)}`;
  const schemas: string[] = [];
  let url: string;
  let pool: pg.Pool;
  let collections = 0;

  const open = async (options: { collection?: string; model?: ModelIdentity; schema?: string; snapshots?: CollectionSnapshots } = {}) => {
    const schema = options.schema ?? run;
    if (!schemas.includes(schema)) schemas.push(schema);
    return PgIndexStore.open(pool, {
      collection: options.collection ?? `c${++collections}`,
      model: options.model ?? MODEL,
      schema,
      ...(options.snapshots ? { snapshots: options.snapshots } : {}),
    });
  };

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    url = await databaseUrl();
    pool = new pg.Pool({ connectionString: url, max: 4 });
  });

  after(async () => {
    if (!pool) return;
    for (const schema of schemas) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });

  it('writes files and reads them back: manifest, hashes, counts and chunks in order', async () => {
    const store = await open();
    expect(await store.counts()).to.deep.equal({ files: 0, chunks: 0 });
    await store.writeFile(file('src/b.ts'), [
      chunk('export function beta() {}', [1, 0, 0, 0], { symbol: 'beta', startLine: 3, endLine: 5 }),
      chunk('export class Gamma {}', [0, 1, 0, 0], { symbol: 'Gamma', kind: 'class', part: { index: 1, count: 2 } }),
    ]);
    await store.writeFile(file('src/a.ts'), [chunk('// just a comment', [0, 0, 1, 0], { kind: 'module', language: 'typescript' })]);
    await store.writeFile(file('empty.txt'), []);

    const manifest = await store.manifest();
    expect(manifest.map((m) => [m.path, m.hash, m.size, m.chunks])).to.deep.equal([
      ['empty.txt', 'v1:empty.txt', 100, 0],
      ['src/a.ts', 'v1:src/a.ts', 100, 1],
      ['src/b.ts', 'v1:src/b.ts', 100, 2],
    ]);
    for (const m of manifest) expect(m.indexedAt).to.be.closeTo(Date.now(), 60_000);
    expect(await store.fileHash('src/b.ts')).to.equal('v1:src/b.ts');
    expect(await store.fileHash('missing.ts')).to.equal(undefined);
    expect(await store.counts()).to.deep.equal({ files: 3, chunks: 3 });
    expect(await store.fileChunks('src/b.ts')).to.deep.equal([
      {
        file: 'src/b.ts',
        type: 'function',
        startLine: 3,
        endLine: 5,
        language: 'typescript',
        symbol: 'beta',
        content: 'export function beta() {}',
        ordinal: 0,
      },
      {
        file: 'src/b.ts',
        type: 'class',
        startLine: 1,
        endLine: 1,
        language: 'typescript',
        symbol: 'Gamma',
        content: 'export class Gamma {}',
        ordinal: 1,
      },
    ]);
    expect(await store.fileChunks('src/a.ts')).to.deep.equal([
      { file: 'src/a.ts', type: 'module', startLine: 1, endLine: 1, language: 'typescript', content: '// just a comment', ordinal: 0 },
    ]);
  });

  it("reads a file's vectors back bit for bit, with what they were made from, for a re-index to keep", async () => {
    const store = await open();
    // Floats whose shortest decimal text is long: the round trip through the database must be exact.
    const odd = unit([Math.PI, 1 / 3, Math.E, 1e-7]);
    await store.writeFile(file('src/v.ts'), [
      { ...chunk('export function first() {}', [1, 0, 0, 0], { symbol: 'first' }), vector: odd },
      chunk('// a note', [0, 0, 1, 0], { kind: 'module' }),
    ]);
    const stored = await store.fileVectors('src/v.ts');
    expect(stored.map((v) => [v.kind, v.symbol, v.content])).to.deep.equal([
      ['function', 'first', 'export function first() {}'],
      ['module', undefined, '// a note'],
    ]);
    expect(stored[0]?.vector).to.deep.equal(odd);
    expect(stored[1]?.vector).to.deep.equal(unit([0, 0, 1, 0]));
    expect(await store.fileVectors('src/missing.ts')).to.deep.equal([]);
  });

  it('replaces a file whole and removes files with everything of theirs', async () => {
    const store = await open();
    await store.writeFile(file('src/x.ts'), [
      chunk('function obsoleteWidget() {}', [1, 0, 0, 0], { symbol: 'obsoleteWidget' }),
      chunk('two', [0, 1, 0, 0]),
    ]);
    await store.writeFile(file('src/y.ts'), [chunk('function keepMe() {}', [0, 0, 1, 0], { symbol: 'keepMe' })]);
    await store.writeFile(file('src/x.ts', 'v2'), [chunk('function freshGadget() {}', [0, 0, 0, 1], { symbol: 'freshGadget' })]);

    expect(await store.fileHash('src/x.ts')).to.equal('v2:src/x.ts');
    expect((await store.fileChunks('src/x.ts')).map((c) => c.content)).to.deep.equal(['function freshGadget() {}']);
    expect(await store.counts()).to.deep.equal({ files: 2, chunks: 2 });
    // the old chunk's terms and vector went with it
    expect(await store.searchBm25('obsoleteWidget', 10)).to.deep.equal([]);
    expect(await store.searchNamed('obsoleteWidget', 10)).to.deep.equal([]);
    expect((await store.searchBm25('freshGadget', 10)).map((r) => `${r.path}#${r.ordinal}`)).to.deep.equal(['src/x.ts#0']);
    expect((await store.searchVector(unit([1, 0, 0, 0]), 10)).map((r) => r.path).sort()).to.deep.equal(['src/x.ts', 'src/y.ts']);

    expect(await store.removeFiles(['src/x.ts', 'never-indexed.ts'])).to.equal(1);
    expect(await store.removeFiles([])).to.equal(0);
    expect((await store.manifest()).map((m) => m.path)).to.deep.equal(['src/y.ts']);
    expect(await store.counts()).to.deep.equal({ files: 1, chunks: 1 });
    expect(await store.searchBm25('freshGadget', 10)).to.deep.equal([]);
    expect((await store.searchVector(unit([0, 0, 0, 1]), 10)).map((r) => r.path)).to.deep.equal(['src/y.ts']);
    // the BM25 statistics follow: the store is what a fresh one with only y.ts is
    const fresh = await open();
    await fresh.writeFile(file('src/y.ts'), [chunk('function keepMe() {}', [0, 0, 1, 0], { symbol: 'keepMe' })]);
    const scores = async (s: PgIndexStore) => (await s.searchBm25('keep me function', 10)).map((r) => r.score);
    expect(await scores(store)).to.deep.equal(await scores(fresh));
  });

  it('keeps collections apart: no search, count or removal reaches another collection', async () => {
    const a = await open({ collection: 'tenant-a' });
    const b = await open({ collection: 'tenant-b' });
    await a.writeFile(file('src/shared.ts'), [chunk('function sharedThing() { return koala; }', [1, 0, 0, 0], { symbol: 'sharedThing' })]);
    await b.writeFile(file('src/shared.ts'), [chunk('function sharedThing() { return quokka; }', [1, 0, 0, 0], { symbol: 'sharedThing' })]);
    await b.writeFile(file('src/b-only.ts'), [chunk('function wombatSecret() {}', [0.9, 0.1, 0, 0], { symbol: 'wombatSecret' })]);

    const idsOf = (list: RankedChunk[]) => list.map((r) => r.rowId);
    const aIds = idsOf(await a.searchVector(unit([1, 0, 0, 0]), 100));
    const bIds = idsOf(await b.searchVector(unit([1, 0, 0, 0]), 100));
    expect(aIds).to.have.length(1);
    expect(bIds).to.have.length(2);
    expect(aIds.filter((id) => bIds.includes(id))).to.deep.equal([]);

    expect(await a.searchBm25('quokka wombatSecret', 10)).to.deep.equal([]);
    expect(await a.searchNamed('wombatSecret', 10)).to.deep.equal([]);
    expect(idsOf(await a.searchBm25('sharedThing', 10))).to.deep.equal(aIds);
    expect(idsOf(await a.searchNamed('sharedThing', 10))).to.deep.equal(aIds);
    const hits = await a.search('wombatSecret quokka sharedThing', unit([0.9, 0.1, 0, 0]), 10);
    expect(hits.map((h) => h.content)).to.deep.equal(['function sharedThing() { return koala; }']);
    // another collection's row ids are not hits of this one
    expect(await a.hits(bIds.map((rowId) => ({ rowId, score: 1 })))).to.deep.equal([]);

    expect(await a.counts()).to.deep.equal({ files: 1, chunks: 1 });
    expect(await b.counts()).to.deep.equal({ files: 2, chunks: 2 });
    await a.removeFiles(['src/shared.ts']);
    expect((await b.manifest()).map((m) => m.path)).to.deep.equal(['src/b-only.ts', 'src/shared.ts']);
    expect(await PgIndexStore.drop(pool, 'tenant-b', { schema: run })).to.equal(true);
    expect(await PgIndexStore.drop(pool, 'tenant-b', { schema: run })).to.equal(false);
    expect(await a.generation()).to.be.a('number');
    await a.writeFile(file('src/after.ts'), [chunk('after', [0, 1, 0, 0])]);
    expect(await a.counts()).to.deep.equal({ files: 1, chunks: 1 });
    await b.generation().then(
      () => expect.fail('a dropped collection has no generation'),
      (e: Error) => expect(e.message).to.match(/tenant-b is not in PostgreSQL schema/),
    );
  });

  it('ranks an exact identifier match first and a semantically close chunk high', async () => {
    const store = await open();
    await store.writeFile(file('src/pool.ts'), [
      chunk('checkOut(): Connection {\n  return this.idle.pop() ?? this.connect();\n}', [1, 0, 0, 0], {
        symbol: 'ConnectionPool.checkOut',
        kind: 'method',
      }),
      chunk('release(connection: Connection) {\n  this.idle.push(connection);\n}', [0.8, 0.6, 0, 0], {
        symbol: 'ConnectionPool.release',
        kind: 'method',
      }),
    ]);
    await store.writeFile(file('src/sockets.ts'), [
      chunk(
        'export function reapSockets(now: number) {\n  for (const s of sockets) if (now - s.lastUse > limit) s.destroy();\n}',
        [0, 1, 0, 0],
        {
          symbol: 'reapSockets',
        },
      ),
    ]);
    await store.writeFile(file('docs/notes.md'), [
      chunk('Callers check out a connection, and check out again after errors; check out is cheap.', [0, 0, 0, 1], {
        kind: 'section',
        language: 'markdown',
        symbol: 'Notes > Pools',
      }),
    ]);
    await store.writeFile(file('src/retry.ts'), [
      chunk('export function delayFor(attempt: number) { return 2 ** attempt * 100; }', [0, 0, 1, 0], { symbol: 'delayFor' }),
    ]);

    // The notes mention "check out" three times, but the query names the method: it comes first
    // even with a query vector that points elsewhere.
    const exact = await store.search('checkOut', unit([0, 0, 0.6, 0.8]), 3);
    expect(exact[0]?.id).to.equal('src/pool.ts#0');
    expect(exact[0]?.metadata).to.deep.equal({
      file: 'src/pool.ts',
      type: 'method',
      startLine: 1,
      endLine: 3,
      language: 'typescript',
      symbol: 'ConnectionPool.checkOut',
    });

    // No word of the question is in the socket reaper, but its vector is the query's nearest.
    const semantic = await store.search('where are unused network handles closed', unit([0.1, 1, 0, 0]), 3);
    expect(semantic[0]?.id).to.equal('src/sockets.ts#0');
    expect(semantic.map((h) => h.id)).to.include('src/pool.ts#1');
    for (let i = 1; i < semantic.length; i++)
      expect((semantic[i] as { score: number }).score).to.be.at.most((semantic[i - 1] as { score: number }).score);
  });

  it('moves the generation on every write, as every replica sees it', async () => {
    const store = await open({ collection: 'generations' });
    const replicaPool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      const replica = await PgIndexStore.open(replicaPool, { collection: 'generations', model: MODEL, schema: run });
      const g0 = await store.generation();
      expect(g0).to.be.closeTo(Date.now(), 60_000);
      await store.writeFile(file('a.ts'), [chunk('a', [1, 0, 0, 0])]);
      expect(await replica.generation()).to.equal(g0 + 1);
      await replica.writeFile(file('a.ts', 'v2'), [chunk('a2', [0, 1, 0, 0])]);
      expect(await store.generation()).to.equal(g0 + 2);
      await store.writeFile(file('empty.ts'), []);
      expect(await store.generation()).to.equal(g0 + 3);
      await replica.removeFiles(['a.ts']);
      expect(await store.generation()).to.equal(g0 + 4);
      await store.removeFiles([]);
      expect(await store.generation()).to.equal(g0 + 4);
      // writes from two processes at once are serialized, none lost
      await Promise.all([
        store.writeFile(file('p.ts'), [chunk('p', [1, 0, 0, 0])]),
        replica.writeFile(file('q.ts'), [chunk('q', [0, 1, 0, 0])]),
        store.writeFile(file('r.ts'), [chunk('r', [0, 0, 1, 0])]),
      ]);
      expect(await replica.generation()).to.equal(g0 + 7);
      expect(await replica.counts()).to.deep.equal({ files: 4, chunks: 3 });
    } finally {
      await replicaPool.end();
    }
  });

  it('refuses a collection made by another model', async () => {
    await open({ collection: 'model-check' });
    let error: unknown;
    try {
      await open({ collection: 'model-check', model: { name: 'another-model', dimensions: 4 } });
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(ModelMismatchError);
  });

  it('creates the schema from several clients at once without failing', async () => {
    const schema = `${run}_concurrent`;
    schemas.push(schema);
    const pools = Array.from({ length: 4 }, () => new pg.Pool({ connectionString: url, max: 1 }));
    try {
      const opened = await Promise.allSettled(
        pools.map((p, i) => PgIndexStore.open(p, { collection: `concurrent-${i % 2}`, model: MODEL, schema })),
      );
      expect(opened.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason))).to.deep.equal([]);
      const stores = opened.map((o) => (o as PromiseFulfilledResult<PgIndexStore>).value);
      await (stores[0] as PgIndexStore).writeFile(file('x.ts'), [chunk('x', [1, 0, 0, 0])]);
      expect(await (stores[2] as PgIndexStore).counts()).to.deep.equal({ files: 1, chunks: 1 });
      expect(await (stores[1] as PgIndexStore).counts()).to.deep.equal({ files: 0, chunks: 0 });
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });

  describe('the same fixture in SQLite and PostgreSQL', () => {
    const DIMENSIONS = 48;
    const model: ModelIdentity = { name: 'hashed-terms-48', dimensions: DIMENSIONS };
    const root = new URL('../../../', import.meta.url).pathname;
    const folders = ['test/fixtures/rag-repo', 'services/rag/index-store', 'services/rag/chunking'];
    const queries = [
      'retry with exponential backoff and jitter',
      'delayFor',
      'LRU cache eviction',
      'splitIdentifier',
      'reciprocal rank fusion',
      'BM25_WEIGHTS',
      'where are the vectors kept in memory',
      'how do I install it on linux',
      'slugify a title',
      'ConnectionPool checkOut',
      'schema version mismatch rebuild',
      'café naïve',
    ];
    let work: string;
    let sqlite: IndexStore;
    let postgres: PgIndexStore;

    /** A deterministic stand-in for an embedder: the chunk's terms hashed into signed buckets. */
    const embed = (text: string): Float32Array => {
      const v = new Array<number>(DIMENSIONS).fill(0);
      for (const term of termsOf(text)) {
        let h = 2166136261;
        for (let i = 0; i < term.length; i++) h = Math.imul(h ^ term.charCodeAt(i), 16777619);
        const bucket = (h >>> 0) % DIMENSIONS;
        v[bucket] = (v[bucket] as number) + ((h >>> 31) & 1 ? 1 : -1);
      }
      v[0] = (v[0] as number) + 0.01; // no zero vector
      return unit(v);
    };

    const walk = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => {
        const full = join(dir, name);
        return statSync(full).isDirectory() ? walk(full) : [full];
      });

    before(async () => {
      work = mkdtempSync(join(tmpdir(), 'pg-index-store-'));
      sqlite = IndexStore.open(join(work, 'index.db'), { model });
      postgres = await open({ collection: 'fixture', model, schema: `${run}_d${DIMENSIONS}` });
      const files = folders
        .flatMap((f) => walk(join(root, f)))
        .filter((p) => /\.(ts|md|py)$/.test(p))
        .map((full) => ({ path: relative(root, full), text: readFileSync(full, 'utf8') }));
      // a name with diacritics: FTS5's tokenizer folds them, so must the PostgreSQL terms
      files.push({ path: 'docs/café.md', text: '# Café\n\nA naïve cafe and a naive CAFÉ.\n' });
      const write = async (store: IndexStore | PgIndexStore, path: string, text: string) => {
        const chunks = (await chunkFile(path, text)).map((c) => ({ ...c, vector: embed(`${c.symbol ?? ''} ${path} ${c.content}`) }));
        await store.writeFile({ path, hash: `h:${text.length}`, size: Buffer.byteLength(text) }, chunks);
      };
      // PostgreSQL goes through rewrites and removals first: its statistics must end as a fresh
      // index's. (SQLite is built fresh: its FTS5 table never takes deleted rows out of N and the
      // average length, see README.md, so only a fresh SQLite index is the reference.)
      for (const { path, text } of files.slice(0, 10)) await write(postgres, path, `${text}\nconst stale = retryLater;\n`);
      await write(postgres, 'docs/gone.md', '# Gone\n\nretry backoff cache eviction linux\n');
      await postgres.removeFiles(['docs/gone.md']);
      for (const { path, text } of files) {
        await write(sqlite, path, text);
        await write(postgres, path, text);
      }
    });

    after(() => {
      sqlite?.close();
      if (work) rmSync(work, { recursive: true, force: true });
    });

    const keys = (list: RankedChunk[]) => list.map((r) => `${r.path}#${r.ordinal}`);

    it('holds the same files and chunks', async () => {
      expect(await postgres.counts()).to.deep.equal(sqlite.counts());
      expect((await postgres.manifest()).map(({ indexedAt: _, ...m }) => m)).to.deep.equal(
        sqlite.manifest().map(({ indexedAt: _, ...m }) => m),
      );
      expect(sqlite.counts().chunks).to.be.greaterThan(50);
    });

    it('gives the same BM25 list, chunk for chunk, with the same scores', async () => {
      for (const query of queries) {
        const want = sqlite.searchBm25(query, 50);
        const got = await postgres.searchBm25(query, 50);
        expect(keys(got), query).to.deep.equal(keys(want));
        got.forEach((g, i) => {
          expect(g.score, `${query} #${i}`).to.be.closeTo((want[i] as RankedChunk).score, 1e-9 * Math.abs(g.score));
        });
      }
      expect(sqlite.searchBm25('cafe', 5).length).to.be.greaterThan(0);
      expect(keys(await postgres.searchBm25('cafe', 5))).to.deep.equal(keys(sqlite.searchBm25('cafe', 5)));
    });

    it('gives the same named chunks and nearest vectors', async () => {
      for (const query of queries) {
        expect(keys(await postgres.searchNamed(query, 10)), query).to.deep.equal(keys(sqlite.searchNamed(query, 10)));
        const vector = embed(query);
        const want = sqlite.searchVector(vector, 20);
        const got = await postgres.searchVector(vector, 20);
        expect(keys(got), query).to.deep.equal(keys(want));
        got.forEach((g, i) => {
          expect(g.score).to.be.closeTo((want[i] as RankedChunk).score, 1e-5);
        });
      }
    });

    it('gives the same fused top results', async () => {
      for (const query of queries) {
        const vector = embed(query);
        const want = sqlite.search(query, vector, 10);
        const got = await postgres.search(query, vector, 10);
        expect(
          got.map((h) => h.id),
          query,
        ).to.deep.equal(want.map((h) => h.id));
        expect(got.map((h) => [h.content, h.metadata])).to.deep.equal(want.map((h) => [h.content, h.metadata]));
        got.forEach((g, i) => {
          expect(g.score).to.be.closeTo((want[i] as { score: number }).score, 1e-12);
        });
      }
    });

    it('searches a snapshot of the vectors held in memory with the same answers, and never a stale one', async () => {
      const snapshots = new CollectionSnapshots(undefined, { minReloadMs: 0 });
      // The handle without snapshots answers every list from the database: the reference below.
      const held = await open({ collection: 'fixture', model, schema: `${run}_d${DIMENSIONS}`, snapshots });
      const first = embed(queries[0] as string);
      // The first search goes through the index and takes the snapshot meanwhile.
      expect(keys(await held.searchVector(first, 20))).to.deep.equal(keys(sqlite.searchVector(first, 20)));
      await held.snapshotLoaded();
      expect(snapshots.bytes).to.be.greaterThan(sqlite.counts().chunks * DIMENSIONS * 4);
      for (const query of queries) {
        const vector = embed(query);
        // Every list from memory: the same chunks, and BM25 with the database's scores.
        const bm25 = await held.searchBm25(query, 50);
        const inDatabase = await postgres.searchBm25(query, 50);
        expect(keys(bm25), query).to.deep.equal(keys(inDatabase));
        // The same operations in the same order; the logarithm may differ in its last bit (the
        // engine's log() against V8's Math.log).
        bm25.forEach((r, i) => {
          expect(r.score, `${query} #${i}`).to.be.closeTo((inDatabase[i] as RankedChunk).score, 1e-12 * r.score);
        });
        expect(keys(await held.searchNamed(query, 10)), query).to.deep.equal(keys(sqlite.searchNamed(query, 10)));
        expect(keys(await held.searchVector(vector, 20)), query).to.deep.equal(keys(sqlite.searchVector(vector, 20)));
        expect(
          (await held.search(query, vector, 10)).map((h) => h.id),
          query,
        ).to.deep.equal(sqlite.search(query, vector, 10).map((h) => h.id));
      }
      // A write moves the generation: the snapshot of the one before is not read again.
      await held.writeFile({ path: 'src/nearest.ts', hash: 'h:nearest', size: 10 }, [chunk('export const nearest = 1;', [...first])]);
      try {
        expect(keys(await held.searchVector(first, 1))).to.deep.equal(['src/nearest.ts#0']);
        await held.snapshotLoaded();
        expect(keys(await held.searchVector(first, 1))).to.deep.equal(['src/nearest.ts#0']);
        expect((await held.search('nearest', first, 1)).map((h) => h.id)).to.deep.equal(['src/nearest.ts#0']);
      } finally {
        await held.removeFiles(['src/nearest.ts']);
      }
      expect(keys(await held.searchVector(first, 20))).to.deep.equal(keys(sqlite.searchVector(first, 20)));
    });
  });
});
