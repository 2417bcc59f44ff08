import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { chunkFile } from '../../../services/rag/chunking/chunker.ts';
import { OnnxEmbedder } from '../../../services/rag/embedding/embedder.ts';
import type { Embedder, EmbeddingKind } from '../../../services/rag/embedding/embedder.ts';
import { QueryBatcher } from '../../../services/rag/index-store/query-batcher.ts';
import { IndexStore } from '../../../services/rag/index-store/store.ts';
import type { SearchHit } from '../../../services/rag/index-store/types.ts';
import { embeddingIdentity } from '../../../services/rag/indexing/embedding-text.ts';
import { indexCollection } from '../../../services/rag/indexing/index-collection.ts';
import type { IndexResult } from '../../../services/rag/indexing/index-collection.ts';
import { hashText } from '../../../services/rag/sources/source-file.ts';
import { walkProject } from '../../../services/rag/sources/walk.ts';
import { FIXTURE, FIXTURE_CASES, FIXTURE_INDEXED_PATHS, lineOf } from './fixture-cases.ts';
import { modelDir } from './model.ts';

const CHILD = new URL('./crash-child.ts', import.meta.url).pathname;

/** The real embedder, with a count of the document texts it was given. */
class CountingEmbedder implements Embedder {
  readonly dimensions: number;
  readonly inner: Embedder;
  documents: string[] = [];

  constructor(inner: Embedder) {
    this.inner = inner;
    this.dimensions = inner.dimensions;
  }

  embed(texts: readonly string[], kind: EmbeddingKind): Promise<Float32Array[]> {
    if (kind === 'document') this.documents.push(...texts);
    return this.inner.embed(texts, kind);
  }
}

/** Every stored file's chunks are exactly what the chunker makes of the text whose hash is stored. */
async function expectWholeFiles(store: IndexStore, texts: ReadonlyMap<string, readonly string[]>): Promise<void> {
  expect(store.verify()).to.deep.equal([]);
  for (const file of store.manifest()) {
    const text = texts.get(file.path)?.find((t) => hashText(t) === file.hash);
    expect(text, `${file.path}: the stored hash is neither the old nor the new text's`).to.not.equal(undefined);
    const expected = (await chunkFile(file.path, text as string)).map((c) => c.content);
    expect(
      store.fileChunks(file.path).map((c) => c.content),
      file.path,
    ).to.deep.equal(expected);
  }
}

describe('rag retrieval: walker + pipeline + store + the real embedder (integration)', function () {
  this.timeout(120_000);
  let embedder: OnnxEmbedder;
  let counting: CountingEmbedder;
  let work: string;
  let source: string;
  let storeFile: string;
  let store: IndexStore;
  let first: IndexResult;

  const reindex = (options: { signal?: AbortSignal; onProgress?: Parameters<typeof indexCollection>[0]['onProgress'] } = {}) =>
    indexCollection({ store, embedder: counting, files: walkProject(source), ...options });
  const search = async (query: string, k = 5): Promise<SearchHit[]> => {
    const [vector] = await embedder.embed([query], 'query');
    return store.search(query, vector as Float32Array, k);
  };
  const put = (path: string, content: string | Uint8Array) => {
    mkdirSync(dirname(join(source, path)), { recursive: true });
    writeFileSync(join(source, path), content);
  };

  before(async function () {
    this.timeout(300_000);
    const dir = modelDir();
    if (!dir) {
      console.warn('    skipped: no EMBEDDING_MODEL_DIR and no python3 for deploy/local/models/provision.sh');
      this.skip();
    }
    embedder = await OnnxEmbedder.load(dir, { intraOpThreads: 2 });
  });

  after(async () => {
    await embedder?.close();
  });

  beforeEach(async () => {
    work = mkdtempSync(join(tmpdir(), 'rag-int-'));
    source = join(work, 'repo');
    cpSync(FIXTURE, source, { recursive: true });
    // what the rules must keep out (not in the committed fixture: its .gitignore would hide them from git)
    put('debug.log', 'noise');
    put('generated/api.ts', 'export const generated = 1;\n');
    put('node_modules/dep/index.js', 'module.exports = 1;\n');
    put('assets/logo.png', new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x00, 0x00, 0x00]));
    storeFile = join(work, 'index.db');
    counting = new CountingEmbedder(embedder);
    store = IndexStore.open(storeFile, { model: embeddingIdentity(embedder.folder.manifest.name, embedder.dimensions) });
    first = await reindex();
  });

  afterEach(() => {
    store.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('indexes the fixture repository and counts what it skipped', () => {
    expect(first.filesIndexed).to.equal(6); // .gitignore, docs/setup.md, 3 TypeScript files, 1 Python file
    // debug.log (gitignore) and logo.png; generated/ and node_modules/ are not entered, so not counted
    expect(first.filesSkipped).to.equal(2);
    expect(first.skipped).to.include({ ignored: 1, binary: 1 });
    expect(first.manifest.map((m) => m.path)).to.deep.equal(FIXTURE_INDEXED_PATHS);
    expect(store.verify()).to.deep.equal([]);
  });

  it('answers with the right file and line range first', async () => {
    for (const c of FIXTURE_CASES) {
      const [top] = await search(c.query);
      const line = lineOf(...c.from);
      expect(top?.metadata.file, c.query).to.equal(c.file);
      expect(top?.metadata.startLine, c.query).to.be.at.most(line);
      expect(top?.metadata.endLine, c.query).to.be.at.least(line);
    }
    const [top] = await search('withBackoff');
    expect(top?.metadata).to.deep.include({ type: 'function', symbol: 'withBackoff', language: 'typescript' });
  });

  it("re-embeds only the changed file's changed chunk on the next run", async () => {
    const path = join(source, 'src/retry.ts');
    writeFileSync(path, readFileSync(path, 'utf8').replace('Math.random() * (exponential / 2)', 'Math.random() * exponential'));
    counting.documents = [];
    const result = await reindex();
    expect(result).to.include({ filesIndexed: 1, filesUnchanged: 5, filesRemoved: 0 });
    const retryChunks = store.fileChunks('src/retry.ts').map((c) => c.content);
    // The edited function alone: the file's other chunks keep their stored vectors.
    expect(retryChunks.length).to.be.greaterThan(1);
    expect(result.chunksReused).to.equal(retryChunks.length - 1);
    expect(counting.documents).to.have.length(1);
    expect(counting.documents[0]).to.match(/^src retry ts \| delay for \(function\)\n/);
    expect(counting.documents[0]).to.include('Math.random() * exponential');
    expect(store.fileChunks('src/retry.ts').some((c) => c.content.includes('Math.random() * exponential'))).to.equal(true);

    counting.documents = [];
    expect(await reindex()).to.include({ filesIndexed: 0, filesUnchanged: 6 });
    expect(counting.documents).to.deep.equal([]);
  });

  it('drops deleted files from the index', async () => {
    unlinkSync(join(source, 'tools/slugify.py'));
    const result = await reindex();
    expect(result).to.include({ filesRemoved: 1, filesIndexed: 0 });
    expect(store.fileHash('tools/slugify.py')).to.equal(undefined);
    const hits = await search('turn a heading into a URL fragment', 10);
    expect(hits.map((h) => h.metadata.file)).to.not.include('tools/slugify.py');
    expect(store.verify()).to.deep.equal([]);
  });

  it('leaves every file fully old or fully new when a run is aborted half way', async () => {
    const texts = new Map<string, string[]>();
    for (const { path } of store.manifest()) {
      const old = readFileSync(join(source, path), 'utf8');
      const changed = `${old}\n// revised\n`;
      writeFileSync(join(source, path), changed);
      texts.set(path, [old, changed]);
    }
    const controller = new AbortController();
    try {
      await reindex({ signal: controller.signal, onProgress: (p) => p.filesIndexed === 3 && controller.abort() });
      expect.fail('the run should have been aborted');
    } catch (e) {
      expect((e as Error).name).to.equal('AbortError');
    }
    const hashes = store.manifest().map((f) => f.hash);
    const revised = store.manifest().filter((f) => f.hash === hashText((texts.get(f.path) as string[])[1] as string));
    expect(revised).to.have.length(3);
    expect(hashes).to.have.length(6);
    await expectWholeFiles(store, texts);
  });

  it('survives a SIGKILL in the middle of indexing: each file whole, the rest indexed on the next run', async function () {
    this.timeout(180_000);
    store.close();
    IndexStore.remove(storeFile);
    const texts = new Map<string, string[]>();
    for (let i = 0; i < 30; i++) {
      const path = `gen/module${String(i).padStart(2, '0')}.ts`;
      const text = Array.from(
        { length: 3 },
        (_, j) => `/** Step ${j} of module ${i}. */\nexport function step${i}_${j}(x: number): number {\n  return x * ${i + j};\n}\n`,
      ).join('\n');
      put(path, text);
      texts.set(path, [text]);
    }
    for (const { path } of first.manifest) texts.set(path, [readFileSync(join(source, path), 'utf8')]);

    const child = spawn(process.execPath, [CHILD, source, storeFile, embedder.folder.dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    const lines = createInterface({ input: child.stdout });
    let written = 0;
    for await (const line of lines) {
      if (line.startsWith('indexed ')) written++;
      if (written === 3) {
        child.kill('SIGKILL');
        break;
      }
      if (line === 'done') break;
    }
    expect(await exited).to.equal('SIGKILL');

    store = IndexStore.open(storeFile, { model: embeddingIdentity(embedder.folder.manifest.name, embedder.dimensions) });
    const kept = store.manifest().length;
    expect(kept).to.be.at.least(3).and.below(texts.size);
    await expectWholeFiles(store, texts);
    const resumed = await reindex();
    expect(resumed.filesUnchanged).to.equal(kept);
    expect(resumed.filesIndexed).to.equal(texts.size - kept);
    await expectWholeFiles(store, texts);
  });

  it('keeps everything across closing and reopening the store', async () => {
    const before = await search('turn a heading into a URL fragment');
    const manifest = store.manifest();
    const generation = store.generation;
    store.close();
    store = IndexStore.open(storeFile, { model: embeddingIdentity(embedder.folder.manifest.name, embedder.dimensions) });
    expect(store.manifest()).to.deep.equal(manifest);
    expect(store.generation).to.equal(generation);
    expect(await search('turn a heading into a URL fragment')).to.deep.equal(before);
    expect(await reindex()).to.include({ filesIndexed: 0, filesUnchanged: 6 });
  });

  it('builds the same index from the same sources', async () => {
    const other = IndexStore.open(join(work, 'other.db'), { model: embeddingIdentity(embedder.folder.manifest.name, embedder.dimensions) });
    try {
      await indexCollection({ store: other, embedder, files: walkProject(source) });
      const dump = (s: IndexStore) => s.manifest().map((f) => [f.path, f.hash, s.fileChunks(f.path)]);
      expect(dump(other)).to.deep.equal(dump(store));
      const [vector] = await embedder.embed(['route parameters in the URL'], 'query');
      expect(other.searchVector(vector as Float32Array, 20)).to.deep.equal(
        store.searchVector(vector as Float32Array, 20).map((r) => ({ ...r, rowId: r.rowId })),
      );
    } finally {
      other.close();
    }
  });

  it('beats the heartbeat while embedding, and serves batched queries', async () => {
    const body = Array.from({ length: 12 }, (_, k) => `  total += values[${k}] * ${k + 1}; // weight ${k}`).join('\n');
    for (let i = 0; i < 8; i++) {
      put(
        `more/m${i}.ts`,
        Array.from(
          { length: 4 },
          (_, j) => `export function f${i}_${j}(values: number[]) {\n  let total = 0;\n${body}\n  return total;\n}\n`,
        ).join('\n'),
      );
    }
    const beats: number[] = [];
    const started = performance.now();
    await indexCollection({
      store,
      embedder,
      files: walkProject(source),
      heartbeat: () => void beats.push(performance.now()),
      heartbeatIntervalMs: 50,
    });
    const took = performance.now() - started;
    expect(beats.length, `${took.toFixed(0)} ms of work`).to.be.at.least(2);
    const gaps = beats.slice(1).map((t, i) => t - (beats[i] as number));
    expect(Math.max(...gaps)).to.be.below(2_000);

    const batcher = new QueryBatcher(embedder);
    const queries = ['turn a heading into a URL fragment', 'withBackoff', 'least recently used'];
    const vectors = await Promise.all(queries.map((q) => batcher.embed([q], 'query')));
    const direct = await embedder.embed(queries, 'query');
    vectors.forEach(([v], i) => {
      let dot = 0;
      for (let j = 0; j < embedder.dimensions; j++) dot += (v?.[j] ?? 0) * ((direct[i] as Float32Array)[j] as number);
      expect(dot).to.be.above(0.9999);
    });
  });
});
