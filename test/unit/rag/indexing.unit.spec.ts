import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Embedder, EmbeddingKind } from '../../../services/rag/embedding/embedder.ts';
import { IndexStore } from '../../../services/rag/index-store/store.ts';
import { DuplicateSourceError, indexCollection } from '../../../services/rag/indexing/index-collection.ts';
import type { IndexProgress } from '../../../services/rag/indexing/index-collection.ts';
import { SkippedSourceError, sourceFromText } from '../../../services/rag/sources/source-file.ts';
import type { SourceEntry, SourceFile } from '../../../services/rag/sources/source-file.ts';

/** Unit vectors from the text's hash: deterministic, and counts what it embeds. */
class HashEmbedder implements Embedder {
  readonly dimensions = 8;
  texts = 0;
  calls = 0;

  async embed(texts: readonly string[], _kind: EmbeddingKind): Promise<Float32Array[]> {
    this.calls++;
    this.texts += texts.length;
    return texts.map((t) => {
      const bytes = createHash('sha256').update(t).digest();
      const v = Float32Array.from(bytes.subarray(0, 8), (b) => b - 127.5);
      const norm = Math.hypot(...v);
      return v.map((x) => x / norm);
    });
  }
}

const fn = (name: string, body = 'return 1;') => `export function ${name}() {\n  ${body}\n}\n`;

describe('rag indexing: the pipeline with a stand-in embedder (unit, temp folder)', () => {
  let dir: string;
  let store: IndexStore;
  let embedder: HashEmbedder;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'rag-indexing-'));
    store = IndexStore.open(join(dir, 'c.db'), { model: { name: 'hash', dimensions: 8 } });
    embedder = new HashEmbedder();
  });

  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const files = (contents: Record<string, string>) => Object.entries(contents).map(([path, text]) => sourceFromText(path, text));

  it('indexes, skips unchanged files, re-indexes changed ones and removes missing ones (full mode)', async () => {
    const first = await indexCollection({
      store,
      embedder,
      files: files({ 'a.ts': fn('alpha'), 'b.ts': fn('beta'), 'c.ts': fn('gamma') }),
    });
    expect(first).to.include({ filesIndexed: 3, filesUnchanged: 0, filesRemoved: 0, filesSkipped: 0, chunks: 3 });
    expect(first.manifest.map((m) => m.path)).to.deep.equal(['a.ts', 'b.ts', 'c.ts']);

    embedder.texts = 0;
    const second = await indexCollection({ store, embedder, files: files({ 'a.ts': fn('alpha'), 'b.ts': fn('beta', 'return 2;') }) });
    expect(second).to.include({ filesIndexed: 1, filesUnchanged: 1, filesRemoved: 1, chunks: 1 });
    expect(embedder.texts).to.equal(1);
    expect(store.manifest().map((m) => m.path)).to.deep.equal(['a.ts', 'b.ts']);
    expect(store.verify()).to.deep.equal([]);
  });

  it("re-embeds only a changed file's chunks that changed, and keeps the stored vectors of the rest", async () => {
    // Functions long enough to be chunks of their own.
    const long = (name: string, value: number) =>
      fn(name, Array.from({ length: 30 }, (_, i) => `const ${name}${i} = ${value + i};`).join('\n  '));
    const text = (changed: number) => [long('alpha', 1), long('beta', changed), long('gamma', 3)].join('\n');
    await indexCollection({ store, embedder, files: files({ 'a.ts': text(2) }) });
    const before = store.fileVectors('a.ts');
    expect(before).to.have.length(3);

    embedder.texts = 0;
    const edit = await indexCollection({ store, embedder, files: files({ 'a.ts': text(200) }) });
    expect(edit).to.include({ filesIndexed: 1, chunks: 3, chunksReused: 2 });
    expect(embedder.texts).to.equal(1);
    const after = store.fileVectors('a.ts');
    expect(after[0]?.vector).to.deep.equal(before[0]?.vector);
    expect(after[2]?.vector).to.deep.equal(before[2]?.vector);
    expect(after[1]?.vector).to.not.deep.equal(before[1]?.vector);

    // The same index as from scratch: kept vectors are the ones the text would get.
    const fresh = IndexStore.open(join(dir, 'fresh.db'), { model: { name: 'hash', dimensions: 8 } });
    try {
      await indexCollection({ store: fresh, embedder, files: files({ 'a.ts': text(200) }) });
      expect(after).to.deep.equal(fresh.fileVectors('a.ts'));
    } finally {
      fresh.close();
    }

    // A chunk renamed but otherwise the same is embedded again: the name is part of what is embedded.
    embedder.texts = 0;
    const renamed = await indexCollection({
      store,
      embedder,
      files: files({ 'a.ts': text(200).replace('function gamma', 'function delta') }),
    });
    expect(renamed).to.include({ chunks: 3, chunksReused: 2 });
    expect(embedder.texts).to.equal(1);
    expect(store.verify()).to.deep.equal([]);
  });

  it('removes nothing in partial mode, except pushed paths that are now skipped', async () => {
    await indexCollection({ store, embedder, files: files({ 'a.ts': fn('alpha'), 'b.ts': fn('beta') }) });
    const partial = await indexCollection({
      store,
      embedder,
      mode: 'partial',
      files: [sourceFromText('c.ts', fn('gamma')), { path: 'b.ts', skipped: 'too-large' }],
    });
    expect(partial).to.include({ filesIndexed: 1, filesRemoved: 1, filesSkipped: 1 });
    expect(partial.skipped['too-large']).to.equal(1);
    expect(store.manifest().map((m) => m.path)).to.deep.equal(['a.ts', 'c.ts']);
  });

  it('indexes in path order whatever the source order, and gives the same index for the same sources', async () => {
    const progress: IndexProgress[] = [];
    await indexCollection({
      store,
      embedder,
      files: files({ 'z.ts': fn('zeta'), 'a.ts': fn('alpha'), 'm.py': 'def m():\n    return 1\n' }),
      onProgress: (p) => progress.push(p),
    });
    const indexed = progress.filter((p) => p.phase === 'indexing').map((p) => p.path);
    expect(indexed).to.deep.equal(['a.ts', 'm.py', 'z.ts']);
    const last = progress.at(-1) as IndexProgress;
    expect(last).to.include({ phase: 'done', filesTotal: 3, filesDone: 3, filesIndexed: 3, chunks: 3 });
    const dump = (s: IndexStore) => s.manifest().flatMap((f) => s.fileChunks(f.path).map((c) => JSON.stringify([f.path, f.hash, c])));
    const other = IndexStore.open(join(dir, 'other.db'), { model: { name: 'hash', dimensions: 8 } });
    try {
      await indexCollection({
        store: other,
        embedder,
        files: files({ 'm.py': 'def m():\n    return 1\n', 'z.ts': fn('zeta'), 'a.ts': fn('alpha') }),
      });
      expect(dump(other)).to.deep.equal(dump(store));
    } finally {
      other.close();
    }
  });

  it('stops between files on abort, leaving what was written whole', async () => {
    const controller = new AbortController();
    const sources = files({ 'a.ts': fn('alpha'), 'b.ts': fn('beta'), 'c.ts': fn('gamma') });
    try {
      await indexCollection({
        store,
        embedder,
        files: sources,
        signal: controller.signal,
        onProgress: (p) => {
          if (p.filesIndexed === 1) controller.abort();
        },
      });
      expect.fail('the run should have been aborted');
    } catch (e) {
      expect((e as Error).name).to.equal('AbortError');
    }
    expect(store.manifest().map((m) => m.path)).to.deep.equal(['a.ts']);
    expect(store.verify()).to.deep.equal([]);
    // the next run picks up where this one stopped
    const resumed = await indexCollection({ store, embedder, files: sources });
    expect(resumed).to.include({ filesIndexed: 2, filesUnchanged: 1 });
  });

  it('beats the heartbeat while working, and stops when it throws', async () => {
    let beats = 0;
    const big = Object.fromEntries(
      Array.from({ length: 6 }, (_, i) => [`f${i}.ts`, Array.from({ length: 5 }, (_, j) => fn(`f${i}_${j}`)).join('\n')]),
    );
    await indexCollection({ store, embedder, files: files(big), heartbeat: () => void beats++, heartbeatIntervalMs: 0, batchSize: 2 });
    expect(beats).to.be.greaterThan(6);

    const failing = async () => {
      throw new Error('consumer session lost');
    };
    const other = { 'x.ts': fn('x'), 'y.ts': fn('y') };
    try {
      await indexCollection({ store, embedder, files: files(other), heartbeat: failing, heartbeatIntervalMs: 0 });
      expect.fail('the run should have stopped');
    } catch (e) {
      expect((e as Error).message).to.equal('consumer session lost');
    }
  });

  it('embeds in batches of batchSize', async () => {
    const text = Array.from({ length: 10 }, (_, j) => fn(`g${j}`)).join('\n');
    await indexCollection({ store, embedder, files: files({ 'g.ts': text }), batchSize: 4 });
    expect(embedder.texts).to.equal(10);
    expect(embedder.calls).to.equal(3);
  });

  it('counts a file that fails the rules when read again as skipped, and drops its old version', async () => {
    await indexCollection({ store, embedder, files: files({ 'a.ts': fn('alpha') }) });
    const changed: SourceFile = {
      path: 'a.ts',
      size: 5,
      hash: 'different',
      read: async () => {
        throw new SkippedSourceError('a.ts', 'binary');
      },
    };
    const result = await indexCollection({ store, embedder, files: [changed] });
    expect(result).to.include({ filesSkipped: 1, filesRemoved: 1, filesIndexed: 0 });
    expect(result.skipped.binary).to.equal(1);
    expect(store.manifest()).to.deep.equal([]);
  });

  it('refuses a path listed twice and an embedder of another dimension', async () => {
    const twice: SourceEntry[] = [sourceFromText('a.ts', 'x'), { path: 'a.ts', skipped: 'binary' }];
    try {
      await indexCollection({ store, embedder, files: twice });
      expect.fail('expected a DuplicateSourceError');
    } catch (e) {
      expect(e).to.be.instanceOf(DuplicateSourceError);
    }
    const wrong: Embedder = { dimensions: 3, embed: async () => [] };
    try {
      await indexCollection({ store, embedder: wrong, files: [] });
      expect.fail('expected a RangeError');
    } catch (e) {
      expect(e).to.be.instanceOf(RangeError);
    }
  });

  it('takes an async iterable of entries, as the walker gives', async () => {
    async function* entries(): AsyncGenerator<SourceEntry> {
      yield sourceFromText('a.ts', fn('alpha'));
      yield { path: 'logo.png', skipped: 'binary' };
    }
    const result = await indexCollection({ store, embedder, files: entries() });
    expect(result).to.include({ filesIndexed: 1, filesSkipped: 1 });
  });
});
