import { expect } from 'chai';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { Chunk } from '../../../services/rag/chunking/chunk.ts';
import { comparePaths } from '../../../services/rag/index-store/memory-snapshot.ts';
import { ModelMismatchError, SchemaMismatchError, StoreBusyError } from '../../../services/rag/index-store/errors.ts';
import { IndexStore } from '../../../services/rag/index-store/store.ts';
import type { ChunkRecord } from '../../../services/rag/index-store/types.ts';

const MODEL = { name: 'test-model', dimensions: 4 };

function unit(...values: number[]): Float32Array {
  const norm = Math.hypot(...values);
  return Float32Array.from(values, (v) => v / norm);
}

function chunk(content: string, startLine: number, vector: Float32Array, extra: Partial<Chunk> = {}): ChunkRecord {
  return {
    content,
    startLine,
    endLine: startLine + content.split('\n').length - 1,
    kind: 'function',
    language: 'typescript',
    vector,
    ...extra,
  };
}

describe('rag index store: SQLite store with given vectors (unit, temp folder)', () => {
  let dir: string;
  let file: string;
  let store: IndexStore | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'rag-store-'));
    file = join(dir, 'collection.db');
    store = IndexStore.open(file, { model: MODEL });
  });

  afterEach(() => {
    store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const open = () => store as IndexStore;

  it('writes a file, replaces its chunks on rewrite and removes it with its chunks', () => {
    const s = open();
    s.writeFile({ path: 'src/retry.ts', hash: 'h1', size: 10 }, [
      chunk('function retryWithBackoff() {}', 1, unit(1, 0, 0, 0), { symbol: 'retryWithBackoff' }),
      chunk('function jitter() {}', 3, unit(0, 1, 0, 0), { symbol: 'jitter' }),
    ]);
    s.writeFile({ path: 'src/pool.ts', hash: 'p1', size: 5 }, [
      chunk('class Pool {}', 1, unit(0, 0, 1, 0), { symbol: 'Pool', kind: 'class' }),
    ]);
    expect(s.counts()).to.deep.equal({ files: 2, chunks: 3 });
    expect(s.fileHash('src/retry.ts')).to.equal('h1');

    s.writeFile({ path: 'src/retry.ts', hash: 'h2', size: 12 }, [chunk('function retry() {}', 1, unit(1, 1, 0, 0), { symbol: 'retry' })]);
    expect(s.counts()).to.deep.equal({ files: 2, chunks: 2 });
    expect(s.fileChunks('src/retry.ts').map((c) => c.symbol)).to.deep.equal(['retry']);
    expect(s.searchBm25('jitter', 5)).to.deep.equal([]);

    expect(s.removeFiles(['src/retry.ts', 'never/there.ts'])).to.equal(1);
    expect(s.manifest().map((f) => f.path)).to.deep.equal(['src/pool.ts']);
    expect(s.searchBm25('retry', 5)).to.deep.equal([]);
    expect(s.searchVector(unit(1, 0, 0, 0), 5).map((r) => r.path)).to.deep.equal(['src/pool.ts']);
    expect(s.verify()).to.deep.equal([]);
  });

  it('keeps an empty file as a row, so it is not re-indexed', () => {
    open().writeFile({ path: 'empty.ts', hash: 'e', size: 0 }, []);
    expect(open().manifest()).to.have.length(1);
    expect(open().manifest()[0]).to.include({ path: 'empty.ts', hash: 'e', size: 0, chunks: 0 });
  });

  it('leaves the file as it was when a write fails half way', () => {
    const s = open();
    s.writeFile({ path: 'a.ts', hash: 'old', size: 1 }, [chunk('old text', 1, unit(1, 0, 0, 0))]);
    const before = s.generation;
    const bad = { ...chunk('new text', 1, unit(0, 1, 0, 0)), startLine: null as unknown as number }; // NOT NULL fails at the insert
    expect(() => s.writeFile({ path: 'a.ts', hash: 'new', size: 2 }, [chunk('first new chunk', 1, unit(0, 1, 0, 0)), bad])).to.throw();
    expect(s.fileHash('a.ts')).to.equal('old');
    expect(s.fileChunks('a.ts').map((c) => c.content)).to.deep.equal(['old text']);
    expect(s.generation).to.equal(before);
    expect(() => s.writeFile({ path: 'a.ts', hash: 'x', size: 1 }, [chunk('x', 1, new Float32Array(3))])).to.throw(
      RangeError,
      /3 dimensions/,
    );
    expect(s.verify()).to.deep.equal([]);
  });

  it('bumps the generation on every change and keeps it across reopening', () => {
    const s = open();
    const g0 = s.generation;
    expect(g0).to.be.greaterThan(1_600_000_000_000); // seeded from the clock
    s.writeFile({ path: 'a.ts', hash: 'a', size: 1 }, [chunk('a', 1, unit(1, 0, 0, 0))]);
    expect(s.generation).to.equal(g0 + 1);
    s.removeFiles(['a.ts']);
    expect(s.generation).to.equal(g0 + 2);
    s.removeFiles([]);
    expect(s.generation).to.equal(g0 + 2);
    s.close();
    store = IndexStore.open(file, { model: MODEL });
    expect(store.generation).to.equal(g0 + 2);
  });

  it('refuses a store made by another model or schema, and a second owner', () => {
    open().close();
    expect(() => IndexStore.open(file, { model: { name: 'other', dimensions: 4 } })).to.throw(ModelMismatchError, /test-model/);
    expect(() => IndexStore.open(file, { model: { name: 'test-model', dimensions: 8 } })).to.throw(ModelMismatchError);
    store = IndexStore.open(file, { model: MODEL });
    expect(() => IndexStore.open(file, { model: MODEL })).to.throw(StoreBusyError);
    store.close();
    const db = new DatabaseSync(file);
    db.exec(`UPDATE meta SET value = '999' WHERE key = 'schema_version'`);
    db.close();
    expect(() => IndexStore.open(file, { model: MODEL })).to.throw(SchemaMismatchError, /999/);
    IndexStore.remove(file);
    expect(existsSync(file)).to.equal(false);
    store = IndexStore.open(file, { model: MODEL });
    expect(store.counts()).to.deep.equal({ files: 0, chunks: 0 });
  });

  it('ranks by BM25 with names above mentions, and ties by path then chunk order', () => {
    const s = open();
    s.writeFile({ path: 'b.ts', hash: 'b', size: 1 }, [
      chunk('// calls checkOut on the pool\nuse()', 1, unit(1, 0, 0, 0), { symbol: 'use' }),
    ]);
    s.writeFile({ path: 'a.ts', hash: 'a', size: 1 }, [
      chunk('checkOut() { return this.take(); }', 1, unit(0, 1, 0, 0), { symbol: 'Pool.checkOut', kind: 'method' }),
      chunk('same words here', 5, unit(0, 0, 1, 0)),
      chunk('same words here', 9, unit(0, 0, 1, 0)),
    ]);
    expect(s.searchBm25('where is checkOut', 5).map((r) => `${r.path}#${r.ordinal}`)).to.deep.equal(['a.ts#0', 'b.ts#0']);
    expect(s.searchBm25('same words', 5).map((r) => `${r.path}#${r.ordinal}`)).to.deep.equal(['a.ts#1', 'a.ts#2']);
    expect(s.searchVector(unit(0, 0, 1, 0), 2).map((r) => `${r.path}#${r.ordinal}`)).to.deep.equal(['a.ts#1', 'a.ts#2']);
    expect(s.searchBm25('', 5)).to.deep.equal([]);
    expect(s.searchBm25('NEAR("x" y) OR', 5)).to.deep.equal([]);
  });

  it('answers hybrid searches with text and metadata, and sees writes at once', () => {
    const s = open();
    s.writeFile({ path: 'src/retry.ts', hash: 'r', size: 1 }, [
      chunk('export function backoffDelay(attempt) {\n  return 100 * 2 ** attempt;\n}', 10, unit(1, 0.1, 0, 0), { symbol: 'backoffDelay' }),
    ]);
    s.writeFile({ path: 'README.md', hash: 'm', size: 1 }, [
      chunk('# Usage\nRun it.', 1, unit(0, 0, 0, 1), { kind: 'section', symbol: 'Usage', language: 'markdown' }),
    ]);
    const [hit] = s.search('backoffDelay', unit(1, 0, 0, 0), 1);
    expect(hit).to.deep.equal({
      id: 'src/retry.ts#0',
      content: 'export function backoffDelay(attempt) {\n  return 100 * 2 ** attempt;\n}',
      score: hit?.score,
      metadata: { file: 'src/retry.ts', type: 'function', startLine: 10, endLine: 12, language: 'typescript', symbol: 'backoffDelay' },
    });
    expect(s.searchNamed('where is backoff delay computed', 3).map((r) => r.path)).to.deep.equal(['src/retry.ts']);
    // the vectors in memory follow the writes
    s.writeFile({ path: 'src/new.ts', hash: 'n', size: 1 }, [chunk('const x = 1;', 1, unit(0, 0, 1, 0))]);
    expect(s.search('unrelated words', unit(0, 0, 1, 0), 1)[0]?.metadata.file).to.equal('src/new.ts');
    expect(s.search('anything', unit(1, 0, 0, 0), 0)).to.deep.equal([]);
  });

  it('fails clearly once closed, and closes twice without harm', () => {
    const s = open();
    s.close();
    s.close();
    expect(() => s.manifest()).to.throw(/closed/);
  });

  it('keeps the vectors in memory in step with writes, as a fresh load would have them', () => {
    const s = open();
    const paths = ['b.ts', 'a/x.ts', 'a.ts', 'z/\uE000.ts', 'z/\u{1F600}.ts', 'é.ts'];
    const vector = (i: number) => unit(1 + (i % 3), (i * 7) % 5, (i * 3) % 4, 1);
    let n = 0;
    const write = (path: string, chunks: number) =>
      s.writeFile(
        { path, hash: `h${n}`, size: 1 },
        Array.from({ length: chunks }, (_, j) => chunk(`text ${n++} fooBar`, j * 3 + 1, vector(n), { symbol: `fooBar${j}` })),
      );
    const query = unit(1, 1, 1, 1);
    for (const p of paths) write(p, 2);
    s.searchVector(query, 1); // the snapshot exists from here on: later writes patch it
    write('a.ts', 3);
    s.removeFiles(['b.ts']);
    write('c.ts', 1);
    s.searchVector(query, 1);
    write('z/\u{1F600}.ts', 1);
    s.removeFiles(['a/x.ts']);
    const patched = { vector: s.searchVector(query, 50), named: s.searchNamed('foo bar', 50) };
    s.close();
    store = IndexStore.open(file, { model: MODEL });
    const fresh = { vector: store.searchVector(query, 50), named: store.searchNamed('foo bar', 50) };
    expect(patched).to.deep.equal(fresh);
    expect(new Set(patched.vector.map((r) => r.path))).to.deep.equal(new Set(['a.ts', 'c.ts', 'z/\uE000.ts', 'z/\u{1F600}.ts', 'é.ts']));
  });

  it('ranks BM25 in memory as FTS5 ranks the same rows, through writes, removals, patches and a reopen', async () => {
    const s = open();
    const words = ['pool', 'checkOut', 'retry_backoff', 'jitter', 'café', 'naïve', 'socket', 'timeout', 'wait-queue', 'the', 'of'];
    /** what each path holds now: the store rebuilt from it is the reference */
    const files = new Map<string, ChunkRecord[]>();
    let n = 0;
    // Deterministic texts of different lengths and term mixes, so idf, lengths and ties all vary.
    const text = (i: number) =>
      Array.from({ length: 3 + ((i * 5) % 9) }, (_, j) => words[(i * 3 + j * j) % words.length] as string).join(' ');
    const write = (path: string, chunks: number) => {
      const records = Array.from({ length: chunks }, (_, j) => {
        n++;
        return chunk(text(n), j * 3 + 1, unit(1, n % 3, j, 1), n % 4 === 0 ? {} : { symbol: `${words[n % words.length]}${j}` });
      });
      s.writeFile({ path, hash: `h${n}`, size: 1 }, records);
      files.set(path, records);
    };
    const remove = (path: string) => {
      s.removeFiles([path]);
      files.delete(path);
    };
    const queries = [
      'pool checkOut',
      'retry backoff jitter',
      'cafe naive',
      'socket timeout wait-queue',
      'the pool of sockets',
      'pool pool',
      'nothing here',
    ];
    const listed = (list: ReturnType<IndexStore['searchBm25']>) => list.map((r) => ({ at: `${r.path}#${r.ordinal}`, score: r.score }));
    const expectSame = (actual: ReturnType<typeof listed>, expected: ReturnType<typeof listed>, what: string) => {
      expect(
        actual.map((r) => r.at),
        what,
      ).to.deep.equal(expected.map((r) => r.at));
      for (const [i, r] of actual.entries()) expect(r.score, what).to.be.closeTo((expected[i] as { score: number }).score, 1e-12);
    };
    // FTS5 keeps counting deleted rows in its statistics (contentless_delete leaves its averages as they
    // were), so after a removal the reference is FTS5 over the same rows written into a new store.
    let references = 0;
    const reference = (q: string) => {
      const other = IndexStore.open(join(dir, `reference-${references++}.db`), { model: MODEL });
      try {
        for (const [path, records] of [...files.entries()].sort(([a], [b]) => comparePaths(a, b)))
          other.writeFile({ path, hash: 'h', size: 1 }, records);
        return listed(other.searchBm25Fts(q, 50));
      } finally {
        other.close();
      }
    };
    const againstReference = (at: string) => {
      for (const q of queries) expectSame(listed(s.searchBm25(q, 50)), reference(q), `${at}: ${q}`);
    };
    for (const p of ['b.ts', 'a/x.ts', 'a.ts', 'lib/pool.ts', 'é.ts']) write(p, 3);
    expect(s.searchBm25('pool', 50)).to.deep.equal(s.searchBm25Fts('pool', 50)); // FTS5 answers while the terms load
    await s.termsLoaded();
    expect(s.termsHeld).to.equal(true);
    for (const q of queries) expectSame(listed(s.searchBm25(q, 50)), listed(s.searchBm25Fts(q, 50)), `fresh load: ${q}`);
    write('a.ts', 5); // patches that carry terms
    remove('b.ts');
    write('c/socket.ts', 2);
    s.searchVector(unit(1, 0, 0, 0), 1); // patches the snapshot, with the terms the writes brought
    expect(s.termsHeld).to.equal(true);
    againstReference('patched');
    for (let round = 0; round < 3; round++) write('lib/pool.ts', 4);
    againstReference('rewritten');
    s.close();
    store = IndexStore.open(file, { model: MODEL });
    const reopened = open();
    reopened.searchBm25('pool', 1);
    await reopened.termsLoaded();
    expect(reopened.termsHeld).to.equal(true);
    for (const q of queries) expectSame(listed(reopened.searchBm25(q, 50)), reference(q), `reopened: ${q}`);
    expect(reopened.searchBm25('pool', 0)).to.deep.equal([]);
    expect(reopened.searchBm25(' ?! ', 5)).to.deep.equal([]);
  });

  it('loads the terms for BM25 into a snapshot made for the vectors, and patched since', async () => {
    const s = open();
    s.writeFile({ path: 'a.ts', hash: 'a', size: 1 }, [chunk('pool checkOut', 1, unit(1, 0, 0, 0), { symbol: 'checkOut' })]);
    s.searchVector(unit(1, 0, 0, 0), 1); // a snapshot without terms
    s.writeFile({ path: 'b.ts', hash: 'b', size: 1 }, [chunk('pool socket', 1, unit(0, 1, 0, 0)), chunk('timeout', 3, unit(0, 0, 1, 0))]);
    s.searchVector(unit(1, 0, 0, 0), 1); // patched, still without terms
    s.searchBm25('pool', 1);
    await s.termsLoaded();
    expect(s.termsHeld).to.equal(true);
    for (const q of ['pool', 'checkOut socket', 'timeout pool']) expect(s.searchBm25(q, 10), q).to.deep.equal(s.searchBm25Fts(q, 10));
  });

  it('answers by FTS5 after a write during a terms load, until a load for the new snapshot is in', async () => {
    const s = open();
    for (let i = 0; i < 40; i++) s.writeFile({ path: `f${i}.ts`, hash: `${i}`, size: 1 }, [chunk(`pool socket ${i}`, 1, unit(1, i, 0, 0))]);
    s.searchBm25('pool', 1); // starts a load for this generation
    s.writeFile({ path: 'g.ts', hash: 'g', size: 1 }, [chunk('pool timeout', 1, unit(0, 1, 0, 0))]);
    await s.termsLoaded();
    expect(s.termsHeld).to.equal(false);
    expect(s.searchBm25('timeout', 5).map((r) => r.path)).to.deep.equal(['g.ts']); // FTS5, and a new load
    await s.termsLoaded();
    expect(s.termsHeld).to.equal(true);
    expect(s.searchBm25('pool timeout', 50)).to.deep.equal(s.searchBm25Fts('pool timeout', 50));
    s.searchBm25('pool', 1);
    s.close(); // stops a load in flight without error
    await s.termsLoaded();
  });

  it('orders paths as SQLite does (code points), not as JavaScript compares UTF-16', () => {
    const paths = ['z/\u{1F600}', 'z/\uE000', 'z/\uFFFD', 'a', 'A', 'é', 'a/b', 'a-b', 'ab'];
    const bytes = [...paths].sort((x, y) => Buffer.compare(Buffer.from(x, 'utf8'), Buffer.from(y, 'utf8')));
    expect([...paths].sort(comparePaths)).to.deep.equal(bytes);
  });
});
