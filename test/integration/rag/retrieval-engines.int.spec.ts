import { expect } from 'chai';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { OnnxEmbedder } from '../../../services/rag/embedding/embedder.ts';
import type { CollectionIndex, CollectionIndexes } from '../../../services/rag/index-store/collection-index.ts';
import { PgIndexes } from '../../../services/rag/index-store/pg/pg-indexes.ts';
import { SqliteIndexes } from '../../../services/rag/index-store/sqlite-indexes.ts';
import type { ModelIdentity, SearchHit } from '../../../services/rag/index-store/types.ts';
import { embeddingIdentity } from '../../../services/rag/indexing/embedding-text.ts';
import { indexCollection } from '../../../services/rag/indexing/index-collection.ts';
import { lookupName } from '../../../services/rag/name-lookup.ts';
import { walkProject } from '../../../services/rag/sources/walk.ts';
import { testLogger } from '../../support/env.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';
import { FIXTURE, FIXTURE_CASES, FIXTURE_INDEXED_PATHS, lineOf } from './fixture-cases.ts';
import { modelDir } from './model.ts';

interface Engine {
  name: 'sqlite' | 'postgres';
  /** A process's view of the indexes (two calls: two processes, as replicas are). */
  indexes(): CollectionIndexes;
}

/**
 * The retrieval checks of retrieval.int.spec.ts, through the `CollectionIndex` the service uses, on
 * each engine: the SQLite files of one process and the PostgreSQL database replicas share.
 */
describe('rag retrieval on both index engines: SQLite and PostgreSQL (integration)', function () {
  this.timeout(120_000);
  const run = `rag_engines_${process.pid}_${Date.now().toString(36)}`;
  let embedder: OnnxEmbedder;
  let model: ModelIdentity;
  let url: string;
  let work: string;
  const opened: CollectionIndexes[] = [];
  const answers = new Map<string, Map<string, string[]>>();

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    const dir = modelDir();
    if (!dir) {
      console.warn('    skipped: no EMBEDDING_MODEL_DIR and no python3 for deploy/local/models/provision.sh');
      this.skip();
    }
    embedder = await OnnxEmbedder.load(dir, { intraOpThreads: 2 });
    model = embeddingIdentity(embedder.folder.manifest.name, embedder.dimensions);
    const env = (await useStack()) as { RAG_DATABASE_URL?: string };
    const found = env.RAG_DATABASE_URL || process.env.RAG_DATABASE_URL;
    if (!found) throw new Error('the stack gave no RAG_DATABASE_URL (PostgreSQL with pgvector) and the environment has none');
    url = found;
    work = mkdtempSync(join(tmpdir(), 'rag-engines-'));
  });

  after(async () => {
    for (const indexes of opened) await indexes.close();
    if (url) {
      const pool = new pg.Pool({ connectionString: url, max: 1 });
      await pool.query(`DROP SCHEMA IF EXISTS "${run}" CASCADE`);
      await pool.end();
    }
    await embedder?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const engines: Engine[] = [
    { name: 'sqlite', indexes: () => new SqliteIndexes({ dataDir: join(work, 'sqlite'), openIndexes: 4, log: testLogger() }) },
    { name: 'postgres', indexes: () => new PgIndexes({ url, poolSize: 2, schema: run, log: testLogger() }) },
  ];

  for (const engine of engines) {
    describe(engine.name, () => {
      let indexes: CollectionIndexes;
      let index: CollectionIndex;
      let source: string;
      let collection: string;
      let n = 0;

      const reindex = () => indexCollection({ store: index, embedder, files: walkProject(source) });
      const search = async (query: string, k = 5): Promise<SearchHit[]> => {
        const [vector] = await embedder.embed([query], 'query');
        return index.search(query, vector as Float32Array, k);
      };

      beforeEach(async () => {
        source = join(work, `${engine.name}-${++n}`);
        cpSync(FIXTURE, source, { recursive: true });
        mkdirSync(join(source, 'generated'), { recursive: true });
        writeFileSync(join(source, 'debug.log'), 'noise');
        indexes = engine.indexes();
        opened.push(indexes);
        collection = `c-${engine.name}-${n}`;
        index = await indexes.open(collection, model);
        const first = await reindex();
        expect(first.filesIndexed).to.equal(6);
        expect(first.skipped).to.include({ ignored: 1 });
      });

      it('indexes the fixture and answers with the right file and line range first', async () => {
        expect((await index.manifest()).map((m) => m.path)).to.deep.equal(FIXTURE_INDEXED_PATHS);
        const byQuery = new Map<string, string[]>();
        for (const c of FIXTURE_CASES) {
          const hits = await search(c.query);
          const [top] = hits;
          const line = lineOf(...c.from);
          expect(top?.metadata.file, c.query).to.equal(c.file);
          expect(top?.metadata.startLine, c.query).to.be.at.most(line);
          expect(top?.metadata.endLine, c.query).to.be.at.least(line);
          byQuery.set(
            c.query,
            hits.map((h) => h.id),
          );
        }
        answers.set(engine.name, byQuery);
        const [top] = await search('withBackoff');
        expect(top?.metadata).to.deep.include({ type: 'function', symbol: 'withBackoff', language: 'typescript' });
      });

      it('finds a name where it is defined and where it is used', async () => {
        const found = await lookupName(index, 'withBackoff', 5);
        expect(found.definitions.map((h) => h.metadata.file)).to.deep.equal(['src/retry.ts']);
        expect(found.definitions[0]?.metadata.symbol).to.equal('withBackoff');
      });

      it('re-indexes only the changed file, a new generation, and drops deleted files', async () => {
        const generation = await index.generation();
        const stored = await index.fileVectors('src/retry.ts');
        const path = join(source, 'src/retry.ts');
        writeFileSync(path, readFileSync(path, 'utf8').replace('Math.random() * (exponential / 2)', 'Math.random() * exponential'));
        const edit = await reindex();
        expect(edit).to.include({ filesIndexed: 1, filesUnchanged: 5, filesRemoved: 0 });
        // Only the edited chunk was embedded again; the others kept their stored vectors, bit for bit.
        expect(edit.chunksReused).to.equal(edit.chunks - 1);
        const kept = await index.fileVectors('src/retry.ts');
        expect(
          kept.filter((k) => stored.some((s) => s.content === k.content && s.vector.every((x, i) => x === k.vector[i]))),
        ).to.have.length(edit.chunks - 1);
        expect(await index.generation()).to.not.equal(generation);
        expect((await index.fileChunks('src/retry.ts')).some((c) => c.content.includes('Math.random() * exponential'))).to.equal(true);
        expect(await reindex()).to.include({ filesIndexed: 0, filesUnchanged: 6 });

        unlinkSync(join(source, 'tools/slugify.py'));
        expect(await reindex()).to.include({ filesRemoved: 1, filesIndexed: 0 });
        expect(await index.fileHash('tools/slugify.py')).to.equal(undefined);
        const hits = await search('turn a heading into a URL fragment', 10);
        expect(hits.map((h) => h.metadata.file)).to.not.include('tools/slugify.py');
      });

      it('ranks the code above a changelog and a type declaration that say the same (file priors)', async () => {
        const said = 'with random jitter so clients do not retry in step';
        writeFileSync(join(source, 'CHANGELOG.md'), `# Changelog\n\n## 2.1.0\n\n- Retries wait longer each time, ${said}.\n`);
        mkdirSync(join(source, 'types'), { recursive: true });
        writeFileSync(
          join(source, 'types/retry.d.ts'),
          `/** Waits 100 ms, 200 ms, 400 ms, ... (capped), ${said}. */\nexport declare function delayFor(attempt: number): number;\n`,
        );
        expect(await reindex()).to.include({ filesIndexed: 2 });
        const query = 'random jitter so clients do not retry in step';
        const [vector] = await embedder.embed([query], 'query');
        const files = (hits: SearchHit[]) => hits.map((h) => h.metadata.file);
        const ranked = files(await index.search(query, vector as Float32Array, 10));
        const flat = files(
          await index.search(query, vector as Float32Array, 10, { kindWeights: { code: 1, test: 1, declaration: 1, prose: 1 } }),
        );
        // Not in the ten: ranked below all of them.
        const rank = (list: string[], file: string) => (list.includes(file) ? list.indexOf(file) : list.length);
        expect(ranked[0], ranked.join(', ')).to.equal('src/retry.ts');
        // Without the priors the declaration, which repeats the code's own comment, is among the first.
        expect(flat, flat.join(', ')).to.include('types/retry.d.ts');
        for (const other of ['CHANGELOG.md', 'types/retry.d.ts']) {
          expect(rank(ranked, other), other).to.be.above(rank(ranked, 'src/retry.ts'));
          expect(rank(ranked, other), other).to.be.at.least(rank(flat, other));
        }
      });

      it('drops a collection: opened again, it is empty', async () => {
        await indexes.drop(collection);
        const again = await indexes.open(collection, model);
        expect(await again.counts()).to.deep.equal({ files: 0, chunks: 0 });
      });

      if (engine.name === 'postgres') {
        it("shares the index: another process's pool sees a write at once, and a collection it dropped", async () => {
          const other = engine.indexes();
          opened.push(other);
          const there = await other.open(collection, model);
          expect(await there.manifest()).to.deep.equal(await index.manifest());
          const generation = await there.generation();
          unlinkSync(join(source, 'src/retry.ts'));
          await reindex();
          expect(await there.generation()).to.be.above(generation);
          expect(await there.fileHash('src/retry.ts')).to.equal(undefined);
          // Dropped by the other process: this one's handle opens the collection again, empty.
          await other.drop(collection);
          expect(await index.counts()).to.deep.equal({ files: 0, chunks: 0 });
        });
      }
    });
  }

  // After both engines' suites (mocha runs a describe's own tests before its nested ones).
  describe('both', () => {
    it('gives the same answers on both engines', () => {
      expect([...(answers.get('postgres') ?? [])]).to.have.length(FIXTURE_CASES.length);
      expect(answers.get('postgres')).to.deep.equal(answers.get('sqlite'));
    });
  });
});
